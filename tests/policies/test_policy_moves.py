"""A policy that changes client or coverage type keeps what hangs on it consistent: scheduled
units and drivers stay with their client (the move is refused, as a unit with coverage history
cannot move either), a coverage type must schedule what the policy has scheduled, and a move
to another agency takes the policy's documents along and leaves the old agency's producer."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.dates import today
from apps.documents.models import Document
from apps.masterdata.models import CoverageType
from apps.policies.models import Policy
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import (
    ClientFactory,
    DriverFactory,
    PolicyFactory,
    ProducerFactory,
    UserFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


def schedule_unit(api, policy):
    unit = VehicleFactory(client=policy.client)
    response = api.post(
        "/v1/vehicles/coverages",
        {
            "vehicleId": unit.id,
            "policyId": policy.id,
            "policyAddedDate": (today() - 30 * DAY).isoformat(),
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    return unit


def covered(api, unit) -> bool:
    body = api.get(f"/v1/coverages/vehicles?vin={unit.serial_number}").json()
    return body["results"][0]["verified"]


def test_a_policy_with_a_unit_scheduled_cannot_move_to_another_client(api, carrier, agency):
    policy = PolicyFactory(client=carrier)
    unit = schedule_unit(api, policy)
    other = ClientFactory(agency=agency)

    refused = assert_problem(
        api.put(f"/v1/policies/{policy.id}", {"clientId": other.id}, format="json"), 400
    )
    assert field_errors(refused) == {
        "clientId": "A policy with scheduled units or drivers cannot move to another client."
    }
    assert Policy.objects.get(pk=policy.pk).client_id == carrier.id
    assert covered(api, unit)

    # Removed, the unit is still the policy's history: the move stays refused.
    api.put(
        "/v1/vehicles/coverages",
        {"vehicleId": unit.id, "policyId": policy.id, "coverageStatus": 1},
        format="json",
    )
    assert_problem(api.put(f"/v1/policies/{policy.id}", {"clientId": other.id}, format="json"), 400)


def test_a_policy_with_a_driver_scheduled_cannot_move_either(api, carrier, agency):
    policy = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="OA"))
    driver = DriverFactory(client=carrier)
    api.post(
        "/v1/drivers/coverages",
        {"driverId": driver.id, "policyId": policy.id, "policyAddedDate": today().isoformat()},
        format="json",
    )
    other = ClientFactory(agency=agency)
    assert_problem(api.put(f"/v1/policies/{policy.id}", {"clientId": other.id}, format="json"), 400)


def test_a_coverage_type_must_schedule_what_the_policy_has_scheduled(api, carrier):
    policy = PolicyFactory(client=carrier)  # AL: schedules units
    unit = schedule_unit(api, policy)
    unscheduling = CoverageType.objects.filter(schedules_units=False).order_by("code").first()

    refused = assert_problem(
        api.put(f"/v1/policies/{policy.id}", {"coverageType": unscheduling.code}, format="json"),
        400,
    )
    assert field_errors(refused) == {
        "coverageType": f"{unscheduling.name} policies do not schedule units, and this policy "
        "has units scheduled."
    }
    assert covered(api, unit)
    assert (
        api.get(f"/v1/coverages/vehicles?vin={unit.serial_number}").json()["results"][0][
            "coverages"
        ][0]["coverageType"]
        == "AL"
    )

    scheduling = CoverageType.objects.filter(schedules_units=True).exclude(code="AL").first()
    moved = api.put(f"/v1/policies/{policy.id}", {"coverageType": scheduling.code}, format="json")
    assert moved.status_code == 200, moved.content
    assert moved.json()["coverageType"] == scheduling.code


def test_a_policy_without_units_moves_with_its_documents(api, carrier, agency):
    policy = PolicyFactory(client=carrier)
    uploaded = api.post(
        "/v1/documents/policies",
        {
            "file": SimpleUploadedFile("dec.pdf", b"%PDF-1.4\n%dec\n", content_type="text/plain"),
            "policyId": policy.id,
        },
        format="multipart",
    )
    assert uploaded.status_code == 201, uploaded.content
    other = ClientFactory(agency=agency)

    moved = api.put(f"/v1/policies/{policy.id}", {"clientId": other.id}, format="json")
    assert moved.status_code == 200, moved.content
    assert moved.json()["clientId"] == other.id
    assert Document.objects.get(pk=uploaded.json()["id"]).client_id == other.id
    listed = api.get(f"/v1/documents/policies?policyId={policy.id}").json()["results"]
    assert [(d["id"], d["clientId"]) for d in listed] == [(uploaded.json()["id"], other.id)]


def test_a_move_to_another_agency_leaves_its_producer_and_takes_its_documents(
    make_api, api, other_api, groups, agency, other_agency, carrier, rival
):
    producer = ProducerFactory(agency=agency, name="Demo Producer")
    policy = PolicyFactory(client=carrier, producer=producer)
    uploaded = api.post(
        "/v1/documents/policies",
        {
            "file": SimpleUploadedFile("dec.pdf", b"%PDF-1.4\n%dec\n", content_type="text/plain"),
            "policyId": policy.id,
        },
        format="multipart",
    ).json()
    both = make_api(
        UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    )

    moved = both.put(f"/v1/policies/{policy.id}", {"clientId": rival.id}, format="json")
    assert moved.status_code == 200, moved.content
    assert moved.json()["agencyId"] == other_agency.id
    assert moved.json()["producerId"] is None

    # The old agency sees neither the policy nor its document; the new one sees both.
    assert_problem(api.get(f"/v1/policies/{policy.id}"), 404)
    assert api.get(f"/v1/documents/policies?policyId={policy.id}").json()["results"] == []
    assert_problem(api.get(f"/v1/documents/{uploaded['id']}/policy/download"), 404)
    assert other_api.get(f"/v1/policies/{policy.id}").status_code == 200
    found = other_api.get(f"/v1/documents/policies?policyId={policy.id}").json()["results"]
    assert [d["id"] for d in found] == [uploaded["id"]]
