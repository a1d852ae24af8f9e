"""The admin's history pages of records that moved between agencies, or that name a record that
did (contract section 13: the admin shows only the records of the staff member's agencies,
history pages included; docs/webhooks.md: the agency a record left sees nothing of the new one).

A history shows the versions recorded while the record was in one of the staff member's
agencies, and names a related record (a parent client, a producer, a client) only if the staff
member may see it now; otherwise by its id, "(not visible)". Walked with Django's test client as
staff of each agency, the moves made over the API with real credentials.
"""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.clients.models import Client
from apps.core.dates import today
from apps.coverages.models import VehicleCoverage
from apps.documents.models import Document
from tests.conftest import staff_member
from tests.factories import (
    ClientFactory,
    DriverFactory,
    PolicyFactory,
    ProducerFactory,
    UserFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db
SECRET = "OTHER AGENCY SECRET"
SECRET_DOT = "4440001"


@pytest.fixture
def both(make_api, groups, agency, other_agency):
    """An API client of a manager of both agencies: the one who may move a record."""
    user = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    return make_api(user)


@pytest.fixture
def demo_staff(client, groups, agency):
    client.force_login(staff_member([agency], groups, "demo-staff"))
    return client


@pytest.fixture
def other_staff(groups, other_agency):
    from django.test import Client as BrowserlessClient

    other = BrowserlessClient()
    other.force_login(staff_member([other_agency], groups, "other-staff"))
    return other


def ok(response):
    assert response.status_code in (200, 201), response.content
    return response


def history(staff, model: str, pk: int) -> str:
    response = staff.get(f"/admin/{model}/{pk}/history/")
    assert response.status_code == 200
    return response.content.decode()


def version_links(page: str, model: str, pk: int) -> list[str]:
    return re.findall(rf'href="(/admin/{model}/{pk}/history/\d+/)"', page)


def test_a_parent_that_moved_away_is_named_by_its_id_only(
    api, both, other_api, demo_staff, agency, other_agency
):
    parent = ok(
        api.post("/v1/clients", {"clientName": "Parent Co", "agencyId": agency.id}, format="json")
    ).json()["id"]
    child = ok(
        api.post("/v1/clients", {"clientName": "Child Co", "agencyId": agency.id}, format="json")
    ).json()["id"]
    ok(api.put(f"/v1/clients/{child}", {"parentClientId": parent}, format="json"))
    ok(api.put(f"/v1/clients/{child}", {"parentClientId": None}, format="json"))
    ok(both.put(f"/v1/clients/{parent}", {"agencyId": other_agency.id}, format="json"))
    ok(
        other_api.put(
            f"/v1/clients/{parent}", {"clientName": SECRET, "dot": SECRET_DOT}, format="json"
        )
    )

    page = history(demo_staff, "clients/client", child)
    assert SECRET not in page and SECRET_DOT not in page
    assert f"client {parent} (not visible)" in page
    for link in version_links(page, "clients/client", child):
        version = demo_staff.get(link)
        assert version.status_code == 200
        assert SECRET not in version.content.decode()


def test_a_client_that_moved_in_shows_only_the_versions_recorded_in_its_new_agency(
    api, both, other_api, demo_staff, other_staff, rival, agency, other_agency
):
    producer = ProducerFactory(agency=other_agency, name="Other Producer")
    ok(other_api.put(f"/v1/clients/{rival.id}", {"producerId": producer.id}, format="json"))
    ok(other_api.put(f"/v1/clients/{rival.id}", {"clientName": SECRET}, format="json"))
    ok(other_api.put(f"/v1/clients/{rival.id}", {"clientName": "Arrived Co"}, format="json"))
    other_versions = [v.history_id for v in Client.history.filter(id=rival.id)]
    ok(both.put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))
    ok(api.put(f"/v1/clients/{rival.id}", {"clientName": "Ours Now"}, format="json"))

    page = history(demo_staff, "clients/client", rival.id)
    for unseen in ("Other Producer", "other-manager", SECRET, "Rival Transport"):
        assert unseen not in page, unseen
    assert len(version_links(page, "clients/client", rival.id)) == 2  # the move, the rename
    # What came with the move is theirs: the client as it arrived, and what they did since.
    assert "Arrived Co" in page and "Ours Now" in page and "both" in page and "manager" in page
    for version in other_versions:
        url = f"/admin/clients/client/{rival.id}/history/{version}/"
        assert demo_staff.get(url).status_code == 404
    # The agency it left sees nothing of it, its history included.
    assert other_staff.get(f"/admin/clients/client/{rival.id}/history/").status_code == 404


def test_a_policys_old_client_that_moved_away_is_not_named(
    api, both, other_api, demo_staff, agency, other_agency, carrier
):
    first = ClientFactory(agency=agency, client_name="First Owner")
    policy = PolicyFactory(client=first)
    ok(api.put(f"/v1/policies/{policy.id}", {"clientId": carrier.id}, format="json"))
    ok(both.put(f"/v1/clients/{first.id}", {"agencyId": other_agency.id}, format="json"))
    ok(other_api.put(f"/v1/clients/{first.id}", {"clientName": SECRET}, format="json"))

    page = history(demo_staff, "policies/policy", policy.id)
    assert SECRET not in page
    assert f"client {first.id} (not visible)" in page
    assert "Lone Star Freight" in page  # the client it has, which they see


@pytest.mark.parametrize(
    "model",
    ["policies/policy", "vehicles/vehicle", "coverages/vehiclecoverage", "documents/document"],
)
def test_records_that_moved_in_with_their_client_show_none_of_the_old_agencys_versions(
    other_api, both, demo_staff, rival, agency, model
):
    """The policies, units, documents and scheduling periods of a client that moved in: every
    version was recorded in the other agency, so none is shown (nor its authors)."""
    policy = PolicyFactory(client=rival)
    unit = VehicleFactory(client=rival)
    ok(other_api.put(f"/v1/policies/{policy.id}", {"policy": "SECRET-1"}, format="json"))
    ok(other_api.put(f"/v1/vehicles/{unit.id}", {"unit": "SECRET-UNIT"}, format="json"))
    ok(
        other_api.post(
            "/v1/vehicles/coverages",
            {"vehicleId": unit.id, "policyId": policy.id, "policyAddedDate": str(today())},
            format="json",
        )
    )
    ok(
        other_api.post(
            "/v1/documents/clients",
            {"file": SimpleUploadedFile("secret.pdf", b"%PDF-1.4"), "clientId": rival.id},
            format="multipart",
        )
    )
    pk = {
        "policies/policy": policy.id,
        "vehicles/vehicle": unit.id,
        "coverages/vehiclecoverage": VehicleCoverage.objects.get(vehicle=unit).id,
        "documents/document": Document.objects.get(client=rival).id,
    }[model]
    ok(both.put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))

    page = history(demo_staff, model, pk)
    assert "other-manager" not in page
    assert version_links(page, model, pk) == []


def test_a_document_of_a_client_that_moved_in_shows_the_versions_since(
    other_api, both, api, demo_staff, rival, agency
):
    """A document carries no agency of its own: its versions go by its client's agency when
    they were recorded."""
    document = ok(
        other_api.post(
            "/v1/documents/clients",
            {"file": SimpleUploadedFile("secret.pdf", b"%PDF-1.4"), "clientId": rival.id},
            format="multipart",
        )
    ).json()["id"]
    ok(both.put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))
    assert api.delete(f"/v1/documents/{document}/client").status_code == 204

    page = history(demo_staff, "documents/document", document)
    assert "other-manager" not in page
    assert len(version_links(page, "documents/document", document)) == 1  # the deletion


def test_the_vehicle_answers_audit_starts_where_the_admin_history_does(
    other_api, both, api, rival, agency
):
    """The API's `audit` of a unit that moved in with its client: none of the old agency's
    versions, authors or fields (they leaked there after the admin's history stopped showing
    them); the new agency's own edits are shown and counted."""
    unit = VehicleFactory(client=rival)
    ok(other_api.put(f"/v1/vehicles/{unit.id}", {"owner": "Secret Owner"}, format="json"))
    ok(other_api.put(f"/v1/vehicles/{unit.id}", {"unit": "SECRET-UNIT"}, format="json"))
    assert other_api.get(f"/v1/vehicles/{unit.id}").json()["audit"]["changeCount"] >= 2
    ok(both.put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))
    ok(api.put(f"/v1/vehicles/{unit.id}", {"unit": "OURS"}, format="json"))

    audit = api.get(f"/v1/vehicles/{unit.id}").json()["audit"]
    assert "other-manager" not in {change["by"] for change in audit["changes"]}
    assert audit["changes"][0]["by"] == "manager" and audit["changes"][0]["fields"] == ["unit"]
    assert not any("owner" in change["fields"] for change in audit["changes"])
    assert audit["changeCount"] == len(audit["changes"]) <= 3
    # The agency it left reads nothing of it any more.
    assert other_api.get(f"/v1/vehicles/{unit.id}").status_code == 404


def audit_rows(staff, model: str, pk: int) -> list[list[str]]:
    """The back-office summary's audit trail on a change page: [when, who, what, fields]."""
    page = staff.get(f"/admin/{model}/{pk}/change/").content.decode()
    table = page.split('id="audit-trail"')[1].split("</table>")[0]
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr><td>.*?</tr>", table)
    ]


def test_the_vehicle_summary_names_the_fields_the_api_audit_names(
    other_api, both, api, demo_staff, rival, agency
):
    """A unit that moved in with its client, then edited: its first version here is diffed
    against the one before it, recorded in the other agency, as the API's audit diffs it."""
    unit = VehicleFactory(client=rival)
    ok(other_api.put(f"/v1/vehicles/{unit.id}", {"owner": "Secret Owner"}, format="json"))
    ok(both.put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))
    ok(api.put(f"/v1/vehicles/{unit.id}", {"unit": "OURS"}, format="json"))

    audit = api.get(f"/v1/vehicles/{unit.id}").json()["audit"]
    rows = audit_rows(demo_staff, "vehicles/vehicle", unit.id)
    assert audit["changes"][0]["fields"] == ["unit"]
    assert rows[0][2:] == ["Changed", "unit"]
    assert len(rows) == audit["changeCount"]
    assert "Secret Owner" not in demo_staff.get(f"/admin/vehicles/vehicle/{unit.id}/change/")


def test_the_driver_summary_diffs_its_first_version_here_against_the_one_before(
    other_api, both, api, demo_staff, rival, agency
):
    driver = DriverFactory(client=rival, first_name="Dana")
    ok(other_api.put(f"/v1/drivers/{driver.id}", {"firstName": "Secret"}, format="json"))
    ok(both.put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))
    ok(api.put(f"/v1/drivers/{driver.id}", {"firstName": "Ours"}, format="json"))

    rows = audit_rows(demo_staff, "drivers/driver", driver.id)
    assert rows[0][2:] == ["Changed", "first_name"]
    assert all(row[1] != "other-manager" for row in rows)


def test_the_history_page_diffs_the_move_against_the_version_before_it(
    other_api, both, demo_staff, rival, agency
):
    """The move is the first version the new agency sees: its Changes name what the move
    changed (the agency), not nothing; the values it had in the other agency are not shown."""
    ok(other_api.put(f"/v1/clients/{rival.id}", {"clientName": "Arrived Co"}, format="json"))
    ok(both.put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))

    page = history(demo_staff, "clients/client", rival.id)
    assert len(version_links(page, "clients/client", rival.id)) == 1
    changes = re.sub(r"\s+", " ", page.split("<tbody>")[1].split("</tbody>")[0])
    assert "<strong>Agency:</strong> (another agency)" in changes
    assert "Rival Transport" not in page and "Other Agency" not in changes


def test_a_history_page_costs_the_same_statements_for_3_or_12_versions(
    api, both, demo_staff, rival, agency
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    ok(both.put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))
    statements = []
    for renames in (2, 11):
        while Client.history.filter(id=rival.id).count() < renames + 2:
            name = f"Renamed {Client.history.filter(id=rival.id).count()}"
            ok(api.put(f"/v1/clients/{rival.id}", {"clientName": name}, format="json"))
        with CaptureQueriesContext(connection) as queries:
            history(demo_staff, "clients/client", rival.id)
        statements.append(len(queries.captured_queries))
    assert statements[0] == statements[1]
