"""The admin's who columns and fields ("Created by", "Updated by", "Uploaded by", a version's
author) name a user only to staff of an agency that user is a member of; otherwise they read
"(another agency)" (apps.core.people). A client that moved from Other Agency into Demo Agency,
with everything its old staff stamped on it, walked as Demo Agency's staff with Django's test
client; the move made over the API by a manager of both agencies.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.clients.models import Client
from apps.core.dates import today
from apps.coverages.models import VehicleCoverage
from apps.reports.models import PolicyPremiumReport
from apps.reports.services import premium_report_create
from tests.conftest import staff_member, user_rows_read
from tests.factories import DriverFactory, PolicyFactory, UserFactory, VehicleFactory

pytestmark = pytest.mark.django_db
THEIRS = "other-manager"
HIDDEN = "(another agency)"


def ok(response):
    assert response.status_code in (200, 201), response.content
    return response.json()


@pytest.fixture
def moved_in(make_api, other_api, other_manager, groups, rival, agency, other_agency):
    """The other agency's client, its policy (with a premium report), unit (scheduled on the
    policy), driver (linked to the unit) and document, all stamped by its manager, then moved
    into Demo Agency."""
    stamps = {"created_by": other_manager, "updated_by": other_manager}
    rival.created_by = rival.updated_by = other_manager
    rival.save(update_fields=["created_by", "updated_by"])
    policy = PolicyFactory(client=rival, **stamps)
    unit = VehicleFactory(client=rival, **stamps)
    driver = DriverFactory(client=rival, **stamps)
    ok(other_api.put(f"/v1/drivers/{driver.id}", {"firstName": "Renamed"}, format="json"))
    ok(other_api.put(f"/v1/vehicles/{unit.id}", {"owner": "Their Owner"}, format="json"))
    schedule = {"vehicleId": unit.id, "policyId": policy.id, "policyAddedDate": str(today())}
    ok(other_api.post("/v1/vehicles/coverages", schedule, format="json"))
    link = {"vehicleId": unit.id, "driverId": driver.id}
    ok(other_api.post("/v1/drivers/vehicles", link, format="json"))
    upload = {"file": SimpleUploadedFile("theirs.pdf", b"%PDF-1.4"), "clientId": rival.id}
    document = ok(other_api.post("/v1/documents/clients", upload, format="multipart"))["id"]
    report = premium_report_create(user=other_manager, policy=policy)
    both = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    ok(make_api(both).put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))
    return {
        "clients/client": rival.id,
        "policies/policy": policy.id,
        "vehicles/vehicle": unit.id,
        "drivers/driver": driver.id,
        "documents/document": document,
        "coverages/vehiclecoverage": VehicleCoverage.objects.get(vehicle=unit).id,
        "reports/policypremiumreport": report.id,
    }


@pytest.fixture
def demo_staff(client, groups, agency):
    client.force_login(staff_member([agency], groups, "demo-staff"))
    return client


def page(staff, path: str) -> str:
    response = staff.get(path)
    assert response.status_code == 200, path
    return response.content.decode()


@pytest.mark.parametrize(
    "model",
    [
        "clients/client",
        "policies/policy",
        "vehicles/vehicle",
        "drivers/driver",
        "documents/document",
        "coverages/vehiclecoverage",
        "reports/policypremiumreport",
    ],
)
def test_a_moved_in_records_page_names_none_of_the_old_agencys_people(demo_staff, moved_in, model):
    shown = page(demo_staff, f"/admin/{model}/{moved_in[model]}/change/")
    assert THEIRS not in shown
    assert HIDDEN in shown


@pytest.mark.parametrize("model", ["documents/document", "reports/policypremiumreport"])
def test_lists_name_none_of_the_old_agencys_people(demo_staff, moved_in, model):
    shown = page(demo_staff, f"/admin/{model}/")
    assert THEIRS not in shown
    assert HIDDEN in shown


def test_the_version_a_move_recorded_names_none_of_the_old_agencys_people(demo_staff, moved_in):
    """The move is the client's first version in Demo Agency: its page shows the client as it
    arrived, its creator among it."""
    pk = moved_in["clients/client"]
    history = page(demo_staff, f"/admin/clients/client/{pk}/history/")
    assert THEIRS not in history and "both" in history
    (moved,) = Client.history.filter(id=pk, agency_id=Client.objects.get(pk=pk).agency_id)
    shown = page(demo_staff, f"/admin/clients/client/{pk}/history/{moved.history_id}/")
    assert THEIRS not in shown and HIDDEN in shown


def test_staff_of_the_users_agency_and_superusers_see_the_names(
    moved_in, groups, agency, other_agency, client
):
    both = staff_member([agency, other_agency], groups, "both-staff")
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    for viewer in (both, root):
        client.force_login(viewer)
        shown = page(client, f"/admin/clients/client/{moved_in['clients/client']}/change/")
        assert THEIRS in shown and HIDDEN not in shown


def test_a_list_reads_whom_it_may_name_once_whatever_its_length(
    demo_staff, moved_in, other_manager, manager
):
    """The reports list's "created by": one query for the page's people, not one per row."""
    policy = PolicyPremiumReport.objects.get(pk=moved_in["reports/policypremiumreport"]).policy
    with CaptureQueriesContext(connection) as one:
        page(demo_staff, "/admin/reports/policypremiumreport/")
    for month in range(1, 12):
        author = other_manager if month % 2 else manager
        premium_report_create(user=author, policy=policy, period=f"2025-{month:02d}")
    with CaptureQueriesContext(connection) as twelve:
        shown = page(demo_staff, "/admin/reports/policypremiumreport/")
    assert shown.count(HIDDEN) == 1 + 6 and ">manager<" in shown and THEIRS not in shown
    assert len(twelve.captured_queries) == len(one.captured_queries)


def test_a_list_reads_only_the_people_it_names(demo_staff, groups, agency, carrier):
    """The reports list's "created by" reads the people its rows name, not every member of the
    staff member's agencies: twelve reports, each by its own author, cost the queries of one;
    50 more staff named nowhere read no more users."""
    policy = PolicyFactory(client=carrier)

    def report(month: int) -> None:
        author = UserFactory(username=f"clerk-{month:02d}", agencies=[agency], groups=[groups[0]])
        premium_report_create(user=author, policy=policy, period=f"2025-{month:02d}")

    report(1)
    with CaptureQueriesContext(connection) as one:
        page(demo_staff, "/admin/reports/policypremiumreport/")
    for month in range(2, 13):
        report(month)
    with CaptureQueriesContext(connection) as twelve:
        shown = page(demo_staff, "/admin/reports/policypremiumreport/")
    assert all(f">clerk-{month:02d}<" in shown for month in range(1, 13)) and HIDDEN not in shown
    assert len(twelve.captured_queries) == len(one.captured_queries)
    read = user_rows_read(twelve)
    for n in range(50):
        UserFactory(username=f"idle-{n:02d}", agencies=[agency], groups=[groups[1]])
    with CaptureQueriesContext(connection) as idle:
        assert ">clerk-12<" in page(demo_staff, "/admin/reports/policypremiumreport/")
    assert user_rows_read(idle) == read
