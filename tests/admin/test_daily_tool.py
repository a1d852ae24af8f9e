"""The back-office as staff use it all day: change pages that answer, lists that read right.

Issue 17: "is unit 101 covered, since when, under which policy?" answered on the vehicle's
own page from the verification selectors; the same for a driver and a client; live records
by default; human sizes and time zones; and all of it invisible to another agency's staff.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.core.dates import today
from apps.coverages.models import DriverCoverage
from apps.drivers.models import DriverVehicle
from apps.masterdata.models import CoverageType
from tests.conftest import staff_member
from tests.factories import (
    ClientFactory,
    DriverFactory,
    LienholderFactory,
    PolicyFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def rival_staff(client, groups, other_agency):
    from django.test import Client

    browser = Client()
    browser.force_login(staff_member([other_agency], groups, "rival-staff"))
    return browser


def _document(carrier, policy=None, size=48_213, deleted=False):
    from apps.documents.models import Document

    return Document.objects.create(
        module="policy" if policy else "client",
        client=carrier,
        policy=policy,
        file_name="coi-2026.pdf" if policy is None else "schedule.pdf",
        storage_name="documents/x/coi.pdf",
        content_type="application/pdf",
        size=size,
        sha256="0" * 64,
        deleted=deleted,
    )


@pytest.fixture
def fleet(agency):
    carrier = ClientFactory(agency=agency, client_name="Lone Star Freight LLC", dot="1234567")
    al = PolicyFactory(client=carrier, policy_number="GWC-AL-0142")
    old = PolicyFactory(
        client=carrier,
        policy_number="GWC-AL-OLD",
        effective_date=today() - dt.timedelta(days=500),
        expiration_date=today() - dt.timedelta(days=135),
    )
    bank = LienholderFactory(agency=agency, name="First Freight Bank")
    unit = VehicleFactory(
        client=carrier, unit="101", serial_number="1FUJGLDR7CLBP8834", lienholder=bank
    )
    VehicleCoverageFactory(
        vehicle=unit,
        policy=old,
        policy_added_date=old.effective_date,
        policy_removed_date=old.expiration_date,
        coverage_status=1,
    )
    VehicleCoverageFactory(vehicle=unit, policy=al)
    bare = VehicleFactory(client=carrier, unit="103", serial_number="3AKJHHDR5LSLA1234")
    oa = PolicyFactory(
        client=carrier,
        policy_number="GWC-OA-0145",
        coverage_type=CoverageType.objects.get(code="OA"),
    )
    maria = DriverFactory(client=carrier, first_name="Maria", last_name="Gonzalez")
    DriverVehicle.objects.create(driver=maria, vehicle=unit)
    DriverCoverage.objects.create(
        driver=maria, policy=oa, coverage_status=7, policy_added_date=oa.effective_date
    )
    document = _document(carrier)
    policy_document = _document(carrier, policy=al, size=2_500_000)
    return {
        "carrier": carrier,
        "unit": unit,
        "bare": bare,
        "maria": maria,
        "al": al,
        "document": document,
        "policy_document": policy_document,
    }


def test_vehicle_page_answers_is_unit_101_covered_since_when_under_which_policy(
    staff_client, fleet
):
    unit = fleet["unit"]
    page = staff_client.get(f"/admin/vehicles/vehicle/{unit.pk}/change/").content.decode()
    answer = page.split('id="verification-today"')[1].split("</div>")[0]
    assert "Covered today" in answer and "ACTIVE" in answer
    assert "GWC-AL-0142" in answer and fleet["al"].effective_date.strftime("%m/%d/%Y") in answer
    timeline = page.split('id="coverage-timeline"')[1].split("</table>")[0]
    # newest first: the current period, then the ended one with its removal date
    assert timeline.index("GWC-AL-0142") < timeline.index("GWC-AL-OLD")
    assert "On schedule (4)" in timeline and "Removed (1)" in timeline
    assert timeline.count("In force</span>") == 1
    drivers = page.split('id="vehicle-drivers"')[1].split("</table>")[0]
    assert "Maria Gonzalez" in drivers and "OA/DD in force" in drivers
    assert "First Freight Bank" in page.split('id="vehicle-lienholder"')[1]
    documents = page.split('id="vehicle-documents"')[1].split("</table>")[0]
    assert f"/admin/documents/document/{fleet['document'].pk}/download/" in documents
    assert f"/admin/documents/document/{fleet['policy_document'].pk}/download/" in documents
    assert "47.1\xa0KB" in documents and "2.4\xa0MB" in documents
    assert 'id="audit-trail"' in page and "Created" in page.split('id="audit-trail"')[1]
    assert f"/admin/vehicles/vehicle/{unit.pk}/certificate/" in page


def test_vehicle_page_of_an_uncovered_or_deleted_unit_says_so(staff_client, fleet):
    bare = fleet["bare"]
    page = staff_client.get(f"/admin/vehicles/vehicle/{bare.pk}/change/").content.decode()
    answer = page.split('id="verification-today"')[1].split("</div>")[0]
    assert "Not covered today" in answer and "INACTIVE" in answer
    unit = fleet["unit"]
    unit.deleted = True
    unit.save()
    page = staff_client.get(f"/admin/vehicles/vehicle/{unit.pk}/change/").content.decode()
    assert "Not verifiable" in page.split('id="verification-today"')[1].split("</div>")[0]


def test_driver_and_client_pages_summarise_coverage(staff_client, fleet):
    maria = fleet["maria"]
    page = staff_client.get(f"/admin/drivers/driver/{maria.pk}/change/").content.decode()
    answer = page.split('id="verification-today"')[1].split("</div>")[0]
    assert "Covered today" in answer and "GWC-OA-0145" in answer
    assert "On schedule (7)" in page and "Unit 101" in page

    carrier = fleet["carrier"]
    page = staff_client.get(f"/admin/clients/client/{carrier.pk}/change/").content.decode()
    answer = page.split('id="verification-today"')[1].split("</div>")[0]
    assert "In force today" in answer and "1 covered" in answer and "1 not covered" in answer
    in_force = page.split('id="policies-in-force"')[1].split("</table>")[0]
    assert "GWC-AL-0142" in in_force and "GWC-OA-0145" in in_force
    assert "GWC-AL-OLD" not in in_force
    assert f"/admin/clients/client/{carrier.pk}/certificate/" in page


def test_one_click_certificates_download_a_pdf(staff_client, fleet):
    carrier, unit = fleet["carrier"], fleet["unit"]
    for url in (
        f"/admin/clients/client/{carrier.pk}/certificate/",
        f"/admin/vehicles/vehicle/{unit.pk}/certificate/",
    ):
        response = staff_client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"] == "application/pdf"
        assert (
            b"".join(response.streaming_content if response.streaming else [response.content])[:4]
            == b"%PDF"
        )


def test_certificate_of_an_uncovered_unit_goes_back_with_the_reason(staff_client, fleet):
    bare = fleet["bare"]
    response = staff_client.get(f"/admin/vehicles/vehicle/{bare.pk}/certificate/", follow=True)
    assert response.redirect_chain[-1][0] == f"/admin/vehicles/vehicle/{bare.pk}/change/"
    assert any(m.level_tag == "warning" for m in response.context["messages"])


def test_another_agency_sees_none_of_it(rival_staff, fleet):
    carrier, unit, maria = fleet["carrier"], fleet["unit"], fleet["maria"]
    for url in (
        f"/admin/clients/client/{carrier.pk}/certificate/",
        f"/admin/vehicles/vehicle/{unit.pk}/certificate/",
    ):
        assert rival_staff.get(url).status_code == 404, url
    for url in (
        f"/admin/vehicles/vehicle/{unit.pk}/change/",
        f"/admin/drivers/driver/{maria.pk}/change/",
        f"/admin/clients/client/{carrier.pk}/change/",
    ):
        response = rival_staff.get(url, follow=True)
        page = response.content.decode()
        assert "GWC-AL-0142" not in page and "coverage-summary" not in page, url
    assert "Lone Star" not in rival_staff.get("/admin/vehicles/vehicle/").content.decode()


def test_lists_show_live_records_by_default_and_deleted_on_request(staff_client, agency):
    ClientFactory(agency=agency, client_name="Live Carrier")
    ClientFactory(agency=agency, client_name="Gone Carrier", deleted=True)
    page = staff_client.get("/admin/clients/client/").content.decode()
    assert "Live Carrier" in page and "Gone Carrier" not in page
    assert "column-deleted" not in page  # no "Deleted: ✗" on every healthy row
    page = staff_client.get("/admin/clients/client/?record=deleted").content.decode()
    assert "Gone Carrier" in page and "Live Carrier" not in page
    assert "bo-deleted" in page
    page = staff_client.get("/admin/clients/client/?record=all").content.decode()
    assert "Gone Carrier" in page and "Live Carrier" in page


def test_document_list_shows_sizes_time_zones_and_download_links(staff_client, fleet):
    page = staff_client.get("/admin/documents/document/").content.decode()
    assert "47.1\xa0KB" in page and "2.4\xa0MB" in page and "48213" not in page
    assert timezone.localtime(fleet["document"].uploaded_at).strftime(" %Z") in page
    assert f"/admin/documents/document/{fleet['document'].pk}/download/" in page


def test_long_filters_are_dropdowns(staff_client, fleet):
    page = staff_client.get("/admin/clients/client/").content.decode()
    by_state = page.split('data-filter-title="state"')[1].split("</details>")[0]
    assert "<select" in by_state and "Texas" in by_state
    assert "backoffice/dropdown_filter.js" in page


def test_coverage_status_filter_speaks_staff(staff_client, fleet):
    page = staff_client.get("/admin/coverages/vehiclecoverage/").content.decode()
    assert "On schedule (4)" in page and "Removed (1)" in page
    assert "Sponsored scheduled unit" not in page
    only_removed = staff_client.get("/admin/coverages/vehiclecoverage/?coverage_status=1")
    assert "GWC-AL-OLD" in only_removed.content.decode()
    assert "GWC-AL-0142" not in only_removed.content.decode()


def test_client_page_shows_compliance_under_the_federal_minimum_profile(staff_client, fleet):
    """Contract section 15: the page shows what verification answers with
    `profile=federal-minimum`, reasons included (the API's own computation)."""
    from django.contrib.auth import get_user_model
    from django.utils.html import escape

    from apps.compliance.selectors import requirement_profile_resolve
    from apps.coverages.selectors import verify_clients

    carrier = fleet["carrier"]
    staff = get_user_model().objects.get(username="staff")
    profile = requirement_profile_resolve(user=staff, ref="federal-minimum")
    expected = verify_clients(user=staff, on=today(), client_id=carrier.pk, profile=profile)[0]
    page = staff_client.get(f"/admin/clients/client/{carrier.pk}/change/").content.decode()
    shown = page.split('id="compliance-today"')[1].split("</span>")[0]
    assert expected.compliance.result in ("PASS", "CAUTION", "FAIL")
    assert f"<strong>{expected.compliance.result}</strong>" in shown
    for reason in expected.compliance.reasons:
        assert escape(reason.message) in shown
