"""The audit trail: every write of the audited records says who, when and what changed."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.clients.models import Client
from apps.core.dates import today
from apps.coverages.models import VehicleCoverage
from apps.documents.models import Document
from apps.drivers.models import Driver
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle
from tests.conftest import staff_member
from tests.factories import ClientFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
VIN = "1FUJGLDR7CLBP8834"


def test_vehicle_detail_reads_its_audit_from_the_history(api, agency):
    carrier = ClientFactory(agency=agency)
    created = api.post(
        "/v1/vehicles",
        {
            "clientId": carrier.id,
            "unit": "1",
            "unitType": "Tractor",
            "modelYear": 2020,
            "makes": "Mack",
            "serialNumber": VIN,
        },
        format="json",
    ).json()
    api.put(f"/v1/vehicles/{created['id']}", {"statedValue": "5000", "unit": "1A"}, format="json")
    audit = api.get(f"/v1/vehicles/{created['id']}").json()["audit"]
    assert [c["type"] for c in audit["changes"]] == ["changed", "created"]
    assert audit["changes"][0]["by"] == "manager"
    assert audit["changes"][0]["fields"] == ["statedValue", "unit"]
    assert audit["changes"][0]["at"].endswith("Z")
    assert audit["changeCount"] == 2


def test_the_audit_names_fields_as_the_api_does_and_counts_what_it_leaves_out(api, agency):
    """camelCase, as every key (contract section 6), under the name the vehicle answer shows;
    a field the API does not show is not named; past the newest 20 changes, `changeCount`
    says how many there are."""
    vehicle = VehicleFactory(client=ClientFactory(agency=agency), serial_number=VIN)
    url = f"/v1/vehicles/{vehicle.id}"
    for change, fields in [
        ({"makes": "Volvo", "unitType": "Trailer"}, ["makeId", "unitTypeId"]),
        (
            {"licensePlate": "TX1", "licensePlateState": "TX", "garagingAddress": "1 Main"},
            ["garagingAddress", "licensePlate", "licensePlateStateId"],
        ),
    ]:
        assert api.put(url, change, format="json").status_code == 200
        answer = api.get(url).json()
        assert answer["audit"]["changes"][0]["fields"] == fields
        assert set(fields) <= set(answer)  # each a key of the vehicle's own answer
    before = answer["audit"]["changeCount"]
    for n in range(25):
        assert api.put(url, {"unit": f"N{n}"}, format="json").status_code == 200
    audit = api.get(url).json()["audit"]
    assert audit["changeCount"] == before + 25
    assert len(audit["changes"]) == 20
    assert [change["fields"] for change in audit["changes"]] == [["unit"]] * 20


def test_every_audited_write_is_recorded_with_its_author(api, agency):
    carrier_id = api.post(
        "/v1/clients", {"clientName": "Audit Co", "agencyId": agency.id}, format="json"
    ).json()["id"]
    api.put(f"/v1/clients/{carrier_id}", {"phone": "1"}, format="json")
    policy_id = api.post(
        "/v1/policies",
        {
            "clientId": carrier_id,
            "effectiveDate": str(today()),
            "coverageType": "AL",
            "expirationDate": str(today().replace(year=today().year + 1)),
        },
        format="json",
    ).json()["id"]
    driver_id = api.post(
        "/v1/drivers",
        {"clientId": carrier_id, "firstName": "A", "lastName": "B", "driverType": "Company Driver"},
        format="json",
    ).json()["id"]
    vehicle = VehicleFactory(client=Client.objects.get(pk=carrier_id), serial_number=VIN)
    api.post(
        "/v1/vehicles/coverages",
        {"vehicleId": vehicle.id, "policyId": policy_id, "policyAddedDate": str(today())},
        format="json",
    )
    api.put(
        "/v1/vehicles/coverages",
        {"vehicleId": vehicle.id, "policyId": policy_id, "coverageStatus": 1},
        format="json",
    )
    document_id = api.post(
        "/v1/documents/clients",
        {"file": SimpleUploadedFile("a.pdf", b"%PDF-1.4"), "clientId": carrier_id},
        format="multipart",
    ).json()["id"]
    api.delete(f"/v1/documents/{document_id}/client")

    def trail(model, pk):
        return [
            (h.history_type, h.history_user and h.history_user.username)
            for h in model.history.filter(id=pk).order_by("history_date", "history_id")
        ]

    assert trail(Client, carrier_id) == [("+", "manager"), ("~", "manager")]
    assert trail(Policy, policy_id) == [("+", "manager")]
    assert trail(Driver, driver_id) == [("+", "manager")]
    coverage = VehicleCoverage.objects.get(vehicle=vehicle)
    assert trail(VehicleCoverage, coverage.pk) == [("+", "manager"), ("~", "manager")]
    assert trail(Document, document_id) == [("+", "manager"), ("~", "manager")]
    assert trail(Vehicle, vehicle.pk) == [("+", None)]  # made outside a request


def test_admin_history_is_scoped(client, groups, agency, other_agency):
    staff = staff_member([agency], groups, "staff")
    mine = PolicyFactory(client=ClientFactory(agency=agency))
    theirs = PolicyFactory(client=ClientFactory(agency=other_agency))
    client.force_login(staff)
    assert client.get(f"/admin/policies/policy/{mine.pk}/history/").status_code == 200
    assert client.get(f"/admin/policies/policy/{theirs.pk}/history/").status_code == 404
    assert client.get(f"/admin/clients/client/{theirs.client_id}/history/").status_code == 404
