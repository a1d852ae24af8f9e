"""The back-office shows a record's related data only with the view permission the API asks
for that data (contract: "read needs view_<model>"; section 13: the certificate lookup needs
the permissions of the certificate endpoints).

A staff member of Demo Agency with only clients.view_client and vehicles.view_vehicle is
refused a policy, a client certificate and a vehicle certificate by the API (403); the admin
answered 200 PDFs on its certificate URLs and showed policy numbers, insurers, terms, the
compliance verdict, driver names and document file names on the client and vehicle pages.
Now each of these needs what the API needs, and a full manager sees what they always saw.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from apps.core.dates import today
from apps.coverages.models import DriverCoverage
from apps.drivers.models import DriverVehicle
from apps.masterdata.models import CoverageType
from tests.admin.test_daily_tool import _document
from tests.factories import (
    ClientFactory,
    DriverFactory,
    PolicyFactory,
    UserFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db

LIMITED = ("clients.view_client", "vehicles.view_vehicle")
POLICY_NUMBERS = ("GWC-AL-0142", "GWC-OA-0145")
INSURER = "Great West Casualty Company"
DRIVER = "Gonzalez"
CLIENT_FILE, POLICY_FILE = "coi-2026.pdf", "schedule.pdf"  # the names `_document` gives


@pytest.fixture
def fleet(agency):
    carrier = ClientFactory(agency=agency, client_name="Lone Star Freight LLC", dot="1234567")
    al = PolicyFactory(client=carrier, policy_number="GWC-AL-0142")
    oa = PolicyFactory(
        client=carrier,
        policy_number="GWC-OA-0145",
        coverage_type=CoverageType.objects.get(code="OA"),
    )
    unit = VehicleFactory(client=carrier, unit="101", serial_number="1FUJGLDR7CLBP8834")
    VehicleCoverageFactory(vehicle=unit, policy=al)
    maria = DriverFactory(client=carrier, first_name="Maria", last_name="Gonzalez")
    DriverVehicle.objects.create(driver=maria, vehicle=unit)
    DriverCoverage.objects.create(
        driver=maria, policy=oa, coverage_status=7, policy_added_date=oa.effective_date
    )
    _document(carrier)
    _document(carrier, policy=al)
    return {"carrier": carrier, "unit": unit, "maria": maria}


def staff_with(agency, *perms: str, username: str = "limited") -> Client:
    """A back-office browser logged in as a staff member of `agency` holding only `perms`."""
    user = UserFactory(username=username, agencies=[agency], is_staff=True)
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    browser = Client()
    browser.force_login(user)
    return browser


def page(browser: Client, url: str) -> str:
    response = browser.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def client_page(browser, fleet) -> str:
    return page(browser, f"/admin/clients/client/{fleet['carrier'].pk}/change/")


def vehicle_page(browser, fleet) -> str:
    return page(browser, f"/admin/vehicles/vehicle/{fleet['unit'].pk}/change/")


def driver_page(browser, fleet) -> str:
    return page(browser, f"/admin/drivers/driver/{fleet['maria'].pk}/change/")


def certificate_urls(fleet) -> list[str]:
    return [
        f"/admin/clients/client/{fleet['carrier'].pk}/certificate/",
        f"/admin/vehicles/vehicle/{fleet['unit'].pk}/certificate/",
    ]


# -- the certificates ---------------------------------------------------------------------------


def test_the_api_refuses_the_limited_staff_member_what_the_admin_must_refuse(
    make_api, agency, fleet
):
    """The reference: what the API answers this staff member."""
    user = UserFactory(username="limited-api", agencies=[agency], is_staff=True)
    for perm in LIMITED:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    api = make_api(user)
    policy = fleet["carrier"].policies.first()
    assert api.get(f"/v1/policies/{policy.pk}").status_code == 403
    assert api.get(f"/v1/certificates/clients?id={fleet['carrier'].pk}").status_code == 403
    assert api.get(f"/v1/certificates/vehicles?id={fleet['unit'].pk}").status_code == 403


@pytest.mark.parametrize("kind", ["client", "vehicle"])
def test_a_certificate_download_without_the_certificate_permissions_is_403(agency, fleet, kind):
    browser = staff_with(agency, *LIMITED)
    url = certificate_urls(fleet)[0 if kind == "client" else 1]
    response = browser.get(url)
    assert response.status_code == 403
    assert response.get("Content-Type", "") != "application/pdf"


@pytest.mark.parametrize("kind", ["client", "vehicle"])
def test_the_certificate_action_is_neither_offered_nor_run_without_the_permissions(
    agency, fleet, kind
):
    browser = staff_with(agency, *LIMITED)
    changelist = f"/admin/{kind}s/{kind}/"
    action = f"download_{kind}_certificates"
    form = browser.get(changelist).context["action_form"]
    offered = {name for name, _ in form.fields["action"].choices} if form else set()
    assert action not in offered
    record = fleet["carrier"] if kind == "client" else fleet["unit"]
    response = browser.post(changelist, {"action": action, "_selected_action": [record.pk]})
    assert response.get("Content-Type", "") not in ("application/pdf", "application/zip")


def test_the_certificate_needs_each_of_the_endpoints_permissions(agency, fleet):
    """policies.view_policy alone, without the record's own view permission beside it, is no
    more enough than the record's alone: the API needs both."""
    client_url, vehicle_url = certificate_urls(fleet)
    browser = staff_with(agency, "clients.view_client", "policies.view_policy")
    assert browser.get(client_url)["Content-Type"] == "application/pdf"
    browser = staff_with(
        agency, "vehicles.view_vehicle", "policies.view_policy", username="unit-reader"
    )
    assert browser.get(vehicle_url)["Content-Type"] == "application/pdf"


def test_a_manager_still_downloads_both_certificates(staff_client, fleet):
    for url in certificate_urls(fleet):
        response = staff_client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"] == "application/pdf"
    form = staff_client.get("/admin/clients/client/").context["action_form"]
    assert "download_client_certificates" in {name for name, _ in form.fields["action"].choices}


# -- the change pages ---------------------------------------------------------------------------


def test_the_client_page_shows_no_policy_coverage_or_compliance_without_the_permissions(
    agency, fleet
):
    shown = client_page(staff_with(agency, *LIMITED), fleet)
    assert "Lone Star Freight LLC" in shown  # the client itself, which they may view
    for absent in (*POLICY_NUMBERS, INSURER, "policies-in-force", "Policies in force"):
        assert absent not in shown, absent
    for absent in ("verification-today", "compliance-today", "federal-minimum"):
        assert absent not in shown, absent
    assert "client-certificate" not in shown and "/certificate/" not in shown
    assert "units-covered" not in shown  # coverage of the units is policy data too
    assert CLIENT_FILE not in shown and POLICY_FILE not in shown


def test_the_client_page_shows_policies_and_verification_with_view_policy(agency, fleet):
    shown = client_page(staff_with(agency, *LIMITED, "policies.view_policy"), fleet)
    in_force = shown.split('id="policies-in-force"')[1].split("</table>")[0]
    assert all(number in in_force for number in POLICY_NUMBERS) and INSURER in in_force
    assert "In force today" in shown.split('id="verification-today"')[1].split("</div>")[0]
    assert 'id="units-covered"' in shown
    assert 'id="client-certificate"' in shown
    # The compliance verdict also needs the requirement profiles' view permission (the API's
    # `profile=` does).
    assert "compliance-today" not in shown


def test_the_client_page_shows_compliance_with_the_profile_permission(agency, fleet):
    perms = (*LIMITED, "policies.view_policy", "compliance.view_requirementprofile")
    assert 'id="compliance-today"' in client_page(staff_with(agency, *perms), fleet)


def test_the_vehicle_page_shows_no_policy_driver_or_document_without_the_permissions(agency, fleet):
    shown = vehicle_page(staff_with(agency, *LIMITED), fleet)
    assert "1FUJGLDR7CLBP8834" in shown  # the vehicle itself
    for absent in (*POLICY_NUMBERS, INSURER, "coverage-timeline", "verification-today"):
        assert absent not in shown, absent
    assert DRIVER not in shown and "vehicle-drivers" not in shown
    assert CLIENT_FILE not in shown and POLICY_FILE not in shown
    assert "vehicle-certificate" not in shown and "/certificate/" not in shown


def test_the_vehicle_page_shows_each_section_with_its_own_permission(agency, fleet):
    shown = vehicle_page(staff_with(agency, *LIMITED, "drivers.view_driver"), fleet)
    drivers = shown.split('id="vehicle-drivers"')[1].split("</table>")[0]
    assert "Maria Gonzalez" in drivers
    assert "OA/DD" not in drivers  # the driver's coverage is policy data
    assert "GWC-AL-0142" not in shown

    shown = vehicle_page(
        staff_with(agency, *LIMITED, "policies.view_policy", username="policy-reader"), fleet
    )
    assert "GWC-AL-0142" in shown.split('id="coverage-timeline"')[1]
    assert "Covered today" in shown.split('id="verification-today"')[1].split("</div>")[0]
    assert 'id="vehicle-certificate"' in shown
    assert DRIVER not in shown

    shown = vehicle_page(
        staff_with(agency, *LIMITED, "documents.view_client_documents", username="client-files"),
        fleet,
    )
    documents = shown.split('id="vehicle-documents"')[1].split("</table>")[0]
    assert CLIENT_FILE in documents and POLICY_FILE not in documents

    shown = vehicle_page(
        staff_with(agency, *LIMITED, "documents.view_policy_documents", username="policy-files"),
        fleet,
    )
    documents = shown.split('id="vehicle-documents"')[1].split("</table>")[0]
    assert POLICY_FILE in documents and CLIENT_FILE not in documents
    assert "GWC-AL-0142" not in shown  # the file, not the policy's number


def test_the_driver_page_shows_no_policy_or_document_without_the_permissions(agency, fleet):
    shown = driver_page(staff_with(agency, "drivers.view_driver"), fleet)
    assert "Gonzalez" in shown
    for absent in (*POLICY_NUMBERS, INSURER, "coverage-timeline", "verification-today"):
        assert absent not in shown, absent
    assert "Unit 101" not in shown and "1FUJGLDR7CLBP8834" not in shown
    assert CLIENT_FILE not in shown and POLICY_FILE not in shown


def test_a_manager_sees_every_section(staff_client, fleet):
    shown = client_page(staff_client, fleet)
    for present in ("policies-in-force", "verification-today", "compliance-today"):
        assert f'id="{present}"' in shown, present
    assert 'id="client-certificate"' in shown and 'id="units-covered"' in shown
    shown = vehicle_page(staff_client, fleet)
    for present in ("coverage-timeline", "verification-today", "vehicle-drivers"):
        assert f'id="{present}"' in shown, present
    drivers = shown.split('id="vehicle-drivers"')[1].split("</table>")[0]
    assert "Maria Gonzalez" in drivers and "OA/DD in force" in drivers
    documents = shown.split('id="vehicle-documents"')[1].split("</table>")[0]
    assert CLIENT_FILE in documents and POLICY_FILE in documents
    assert "GWC-AL-0142" in documents  # a policy document names its policy
    assert 'id="vehicle-certificate"' in shown
    shown = driver_page(staff_client, fleet)
    assert "GWC-OA-0145" in shown and "Unit 101" in shown
    assert today().strftime("%m/%d/%Y") in shown


# -- the lists and the dashboard ----------------------------------------------------------------


def test_lists_and_dashboard_show_coverage_only_to_who_may_verify(agency, fleet, manager):
    """Whether a client has a policy in force, how many it has, whether a unit is covered today
    and the dashboard's counts of them are verification's and the policies' answers: a staff
    member without the permissions those need (`policies.view_policy`) is shown neither the
    columns nor the filters (a filter's URL typed by hand is refused as any unknown one), nor
    the counts; a full manager sees them all."""
    limited = staff_with(agency, *LIMITED)
    clients = page(limited, "/admin/clients/client/")
    assert "Lone Star Freight LLC" in clients
    for text in ("live policies", "in force", "in_force="):
        assert text not in clients, text
    vehicles = page(limited, "/admin/vehicles/vehicle/")
    assert "1FUJGLDR7CLBP8834" in vehicles
    assert "covered today" not in vehicles.lower() and "covered=" not in vehicles
    for url in ("/admin/clients/client/?in_force=yes", "/admin/vehicles/vehicle/?covered=no"):
        assert limited.get(url)["Location"].endswith("?e=1"), url
    assert "NOT covered" not in client_page(limited, fleet)  # its units' column
    index = page(limited, "/admin/")
    assert "Units in force" not in index and "Policies expiring" not in index
    assert "Clients" in index

    full = staff_with(agency, *LIMITED, "policies.view_policy", username="verifier")
    assert "in force" in page(full, "/admin/clients/client/")
    assert "covered today" in page(full, "/admin/vehicles/vehicle/").lower()
    index = page(full, "/admin/")
    assert "Units in force" in index and "Policies expiring" in index
