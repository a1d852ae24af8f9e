"""Issue 14: the admin is a client of the services, never a side door."""

from __future__ import annotations

import datetime as dt
import hashlib
from decimal import Decimal

import pytest
from django.core.files.base import ContentFile

from apps.clients.models import Client
from apps.core.dates import today
from apps.coverages.models import CoverageEvent, VehicleCoverage
from apps.documents.models import Module
from apps.documents.services import document_upload
from apps.drivers.models import DriverVehicle
from apps.events.models import Event
from apps.masterdata.models import City, CoverageType, UnitType
from apps.policies.models import PolicyLimit
from apps.reports.models import PolicyPremiumReport
from apps.vehicles.models import Vehicle
from tests.admin.formdata import form_data
from tests.factories import (
    ClientFactory,
    DriverFactory,
    LienholderFactory,
    PolicyFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


def change_url(obj) -> str:
    return f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/{obj.pk}/change/"


def change_page(staff_client, obj) -> str:
    return staff_client.get(change_url(obj)).content.decode()


def change(staff_client, obj, **overrides):
    data = form_data(change_page(staff_client, obj), **overrides)
    return staff_client.post(change_url(obj), data)


def test_client_form_refuses_a_parent_cycle(staff_client, agency):
    grandparent = ClientFactory(agency=agency, client_name="Grandparent Co")
    parent = ClientFactory(agency=agency, client_name="Parent Co", parent_client=grandparent)
    response = change(staff_client, grandparent, parent_client=parent.pk)
    assert response.status_code == 200  # the form again, with the service's message
    assert "cannot be its own parent or ancestor" in response.content.decode()
    grandparent.refresh_from_db()
    assert grandparent.parent_client_id is None


def test_client_form_refuses_a_live_duplicate_dot(staff_client, agency):
    ClientFactory(agency=agency, client_name="First", dot="2223334")
    second = ClientFactory(agency=agency, client_name="Second", dot="5556667")
    response = change(staff_client, second, dot="2223334")
    assert response.status_code == 200
    assert "already exists" in response.content.decode()
    second.refresh_from_db()
    assert second.dot == "5556667"


def test_client_form_saves_through_the_service_with_its_author(staff_client, agency):
    carrier = ClientFactory(agency=agency, client_name="Before Rename")
    response = change(staff_client, carrier, client_name="After Rename")
    assert response.status_code == 302, response.content.decode()[:2000]
    carrier.refresh_from_db()
    assert carrier.client_name == "After Rename"
    assert carrier.updated_by == staff_client.user
    assert carrier.history.first().history_user == staff_client.user


DOT_TAKEN = "A live client with DOT 1234567 already exists in this agency."


def _dot_errors(response) -> list[str]:
    assert response.status_code == 200  # the form again, not a server error
    return response.context["adminform"].form.errors.get("dot")


def test_client_form_reads_a_dot_with_leading_zeros_as_the_taken_one(staff_client, agency):
    ClientFactory(agency=agency, client_name="First", dot="1234567")
    second = ClientFactory(agency=agency, client_name="Second", dot="5556667")
    page = staff_client.get("/admin/clients/client/add/").content.decode()
    data = form_data(page, client_name="Zero Led", dot="01234567", agency=agency.pk)
    added = staff_client.post("/admin/clients/client/add/", data)
    assert _dot_errors(added) == [DOT_TAKEN]  # the API's 409, in its words, on the field
    assert _dot_errors(change(staff_client, second, dot="01234567")) == [DOT_TAKEN]
    second.refresh_from_db()
    assert second.dot == "5556667"
    assert not Client.objects.filter(client_name="Zero Led").exists()


@pytest.mark.parametrize("dot", ["١٢٣٤", "12 34", "12a4", "0000"])
def test_client_form_says_once_that_a_dot_is_no_dot(staff_client, agency, dot):
    page = staff_client.get("/admin/clients/client/add/").content.decode()
    data = form_data(page, client_name="Typo Freight", dot=dot, agency=agency.pk)
    response = staff_client.post("/admin/clients/client/add/", data)
    assert _dot_errors(response) == [
        "A DOT number is 1 to 8 digits, not all zeros (leading zeros are not counted)."
    ]


def test_a_rule_only_the_database_holds_at_the_trial_save_is_a_form_error(
    staff_client, agency, monkeypatch
):
    # As when another request took the DOT between full_clean's check and the save.
    ClientFactory(agency=agency, client_name="First", dot="1234567")
    monkeypatch.setattr(Client, "validate_constraints", lambda self, exclude=None: None)
    page = staff_client.get("/admin/clients/client/add/").content.decode()
    data = form_data(page, client_name="Racing", dot="1234567", agency=agency.pk)
    response = staff_client.post("/admin/clients/client/add/", data)
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert form.non_field_errors() == ["The request conflicts with an existing record."]
    assert not Client.objects.filter(client_name="Racing").exists()


def test_client_added_in_the_admin_goes_through_the_service(staff_client, agency):
    page = staff_client.get("/admin/clients/client/add/").content.decode()
    data = form_data(page, client_name="Admin Added Freight", dot="0098765", agency=agency.pk)
    response = staff_client.post("/admin/clients/client/add/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    created = Client.objects.get(client_name="Admin Added Freight")
    assert created.created_by == staff_client.user
    assert created.agency_id == agency.pk


def link_vehicle(staff_client, driver, vehicle):
    url = f"/admin/drivers/driver/{driver.pk}/change/"
    data = form_data(staff_client.get(url).content.decode())
    prefix = next(k for k in data if k.endswith("-TOTAL_FORMS") and "vehicle" in k.lower())
    prefix = prefix.removesuffix("-TOTAL_FORMS")
    total = int(data[f"{prefix}-TOTAL_FORMS"])
    data[f"{prefix}-TOTAL_FORMS"] = str(total + 1)
    data[f"{prefix}-{total}-vehicle"] = str(vehicle.pk)
    data[f"{prefix}-{total}-driver"] = str(driver.pk)
    return staff_client.post(url, data)


def test_driver_inline_refuses_a_vehicle_of_another_client(staff_client, agency):
    mine = ClientFactory(agency=agency, client_name="Driver's Carrier")
    elsewhere = ClientFactory(agency=agency, client_name="Another Carrier")
    driver = DriverFactory(client=mine)
    foreign_unit = VehicleFactory(client=elsewhere)
    response = link_vehicle(staff_client, driver, foreign_unit)
    assert response.status_code == 200
    assert "belongs to another client" in response.content.decode()
    assert not DriverVehicle.objects.filter(driver=driver).exists()


def test_driver_inline_links_a_vehicle_of_the_same_client_through_the_service(staff_client, agency):
    mine = ClientFactory(agency=agency, client_name="Driver's Carrier")
    driver = DriverFactory(client=mine)
    unit = VehicleFactory(client=mine)
    response = link_vehicle(staff_client, driver, unit)
    assert response.status_code == 302, response.content.decode()[:3000]
    link = DriverVehicle.objects.get(driver=driver)
    assert (link.vehicle_id, link.created_by) == (unit.pk, staff_client.user)


def test_driver_form_applies_the_services_date_rule(staff_client, agency):
    driver = DriverFactory(client=ClientFactory(agency=agency))
    response = change(staff_client, driver, date_of_birth="1990-05-01", hire_date="1980-01-01")
    assert response.status_code == 200
    assert "Cannot precede the date of birth" in response.content.decode()
    driver.refresh_from_db()
    assert driver.hire_date is None


def test_driver_form_shows_a_future_date_of_birth_on_its_field(staff_client, agency):
    driver = DriverFactory(client=ClientFactory(agency=agency), date_of_birth=dt.date(1990, 5, 1))
    born = (today() + dt.timedelta(days=1)).isoformat()
    response = change(staff_client, driver, date_of_birth=born)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "date_of_birth": ["Cannot be after today."]
    }
    driver.refresh_from_db()
    assert driver.date_of_birth == dt.date(1990, 5, 1)


def test_policy_limits_inline_saves_through_the_service(staff_client, agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    url = f"/admin/policies/policy/{policy.pk}/change/"
    data = form_data(staff_client.get(url).content.decode())
    total = int(data["limits-TOTAL_FORMS"])
    data["limits-TOTAL_FORMS"] = str(total + 1)
    data.update(
        {
            f"limits-{total}-name": "Retention",
            f"limits-{total}-amount": "250000.00",
            f"limits-{total}-position": "9",
        }
    )
    response = staff_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert ("Retention", Decimal("250000.00")) in {
        (lim.name, lim.amount) for lim in policy.limits.all()
    }
    policy.refresh_from_db()
    assert policy.updated_by == staff_client.user


def test_policy_limits_changed_in_the_admin_are_one_policy_updated_with_them(staff_client, agency):
    """As a PUT of the limits: one policy.updated, carrying the new limits."""
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    response = change(staff_client, policy, **{"limits-0-amount": "2000000.00"})
    assert response.status_code == 302, response.content.decode()[:3000]
    events = Event.objects.filter(type__startswith="policy.", data__id=policy.pk)
    assert [(e.type, e.data["limits"]) for e in events] == [
        ("policy.updated", [{"name": "Combined Single Limit", "amount": "2000000.00"}])
    ]


def test_policy_rates_inline_refuses_a_negative_rate(staff_client, agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    url = f"/admin/policies/policy/{policy.pk}/change/"
    data = form_data(staff_client.get(url).content.decode())
    total = int(data["rates-TOTAL_FORMS"])
    data["rates-TOTAL_FORMS"] = str(total + 1)
    tractor = UnitType.objects.get(name="Tractor")
    data.update(
        {
            f"rates-{total}-unit_type": str(tractor.pk),
            f"rates-{total}-annual_rate": "-5.00",
            f"rates-{total}-rate_per_100_value": "0",
            f"rates-{total}-minimum_premium": "0",
        }
    )
    response = staff_client.post(url, data)
    assert response.status_code == 200
    assert "cannot be negative" in response.content.decode()
    assert not policy.rates.exists()


def test_negative_money_is_refused_in_the_admin_as_in_the_api(staff_client, api, agency):
    # A premium, a limit or a stated value below zero: the API's 400 was the serializer's
    # alone, so the admin saved them and the API then served them.
    policy = PolicyFactory(client=ClientFactory(agency=agency), premium=Decimal("1000.00"))
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    unit = VehicleFactory(client=policy.client)
    for obj, overrides in (
        (policy, {"premium": "-100"}),
        (policy, {"limits-0-amount": "-5"}),
        (unit, {"stated_value": "-1"}),
    ):
        response = change(staff_client, obj, **overrides)
        assert response.status_code == 200, (overrides, response.status_code)
        page = response.content.decode()
        assert "greater than or equal to 0" in page or "cannot be negative" in page, overrides
    policy.refresh_from_db()
    unit.refresh_from_db()
    assert policy.premium == Decimal("1000.00")
    assert [limit.amount for limit in policy.limits.all()] == [Decimal("1000000.00")]
    assert unit.stated_value == Decimal("100000.00")
    assert api.get(f"/v1/policies/{policy.pk}").json()["premium"] == "1000.00"


def test_policy_form_applies_the_services_date_rule(staff_client, agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    response = change(staff_client, policy, expiration_date=policy.effective_date.isoformat())
    assert response.status_code == 200
    assert "after the effective date" in response.content.decode()


def test_report_added_in_the_admin_goes_through_the_service(staff_client, agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    page = staff_client.get("/admin/reports/policypremiumreport/add/").content.decode()
    data = form_data(page, policy=policy.pk, period="2026-02")
    response = staff_client.post("/admin/reports/policypremiumreport/add/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    report = PolicyPremiumReport.objects.get(policy=policy)
    assert (report.period_start, report.period_end) == (
        dt.date(2026, 2, 1),
        dt.date(2026, 2, 28),
    )
    assert report.created_by == staff_client.user


def test_report_form_refuses_a_month_that_does_not_exist(staff_client, agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    page = staff_client.get("/admin/reports/policypremiumreport/add/").content.decode()
    data = form_data(page, policy=policy.pk, period="2026-13")
    response = staff_client.post("/admin/reports/policypremiumreport/add/", data)
    assert response.status_code == 200
    assert "Expected YYYY-MM" in response.content.decode()
    assert not PolicyPremiumReport.objects.filter(policy=policy).exists()


@pytest.mark.parametrize("period", ["2026-2", "+2026-02", "\u0662\u0660\u0662\u0666-\u0660\u0662"])
def test_report_form_takes_the_services_month_format(staff_client, agency, period):
    # The service's rule, not a form regex of its own (whose \d took other scripts' digits).
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    page = staff_client.get("/admin/reports/policypremiumreport/add/").content.decode()
    data = form_data(page, policy=policy.pk, period=period)
    response = staff_client.post("/admin/reports/policypremiumreport/add/", data)
    assert response.status_code == 200
    assert "Expected YYYY-MM" in response.content.decode()
    assert not PolicyPremiumReport.objects.filter(policy=policy).exists()


def test_vehicle_form_refuses_a_vin_the_client_already_has(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    VehicleFactory(client=carrier, serial_number="1FUJGLDR7CLBP8834")
    second = VehicleFactory(client=carrier, serial_number="3AKJHHDR5KSKA1234")
    response = change(staff_client, second, serial_number="1FUJGLDR7CLBP8834")
    assert response.status_code == 200
    assert "already has a vehicle with" in response.content.decode()
    second.refresh_from_db()
    assert second.serial_number == "3AKJHHDR5KSKA1234"


def test_vehicle_form_takes_a_vin_and_a_plate_as_the_api_does(staff_client, agency):
    # POST /v1/vehicles and the fleet import take a VIN in lower case (normalize_vin).
    carrier = ClientFactory(agency=agency)
    model = VehicleFactory(client=carrier, serial_number="3AKJHHDR5KSKA1234")
    url = "/admin/vehicles/vehicle/add/"
    page = form_data(change_page(staff_client, model))
    fields = {k: page[k] for k in ("client", "unit_type", "make", "model_year")}
    data = {**form_data(staff_client.get(url).content.decode()), **fields}
    lower = {"serial_number": "1fujgldr7clbp8870", "license_plate": "tx-4k9"}
    response = staff_client.post(url, {**data, "unit": "L-1", **lower})
    assert response.status_code == 302, response.content.decode()[:3000]
    added = Vehicle.objects.get(unit="L-1")
    assert (added.serial_number, added.license_plate) == ("1FUJGLDR7CLBP8870", "TX-4K9")

    again = staff_client.post(url, {**data, "unit": "L-2", **lower})  # the same VIN again
    assert again.status_code == 200
    assert again.context["adminform"].form.errors["serial_number"] == [
        "This client already has a vehicle with VIN 1FUJGLDR7CLBP8870."
    ]
    assert change(staff_client, model, serial_number="3akjhhdr5kska1234").status_code == 302
    model.refresh_from_db()
    assert model.serial_number == "3AKJHHDR5KSKA1234"
    # Refused as the API refuses them: upper-cased first, the long s would be an S.
    for plate in ("\u017f12", "\u0436\u0436-1711"):
        refused = change(staff_client, model, license_plate=plate)
        assert refused.status_code == 200, plate
        assert "license_plate" in refused.context["adminform"].form.errors
    model.refresh_from_db()
    assert model.license_plate != "S12"


def test_driver_form_stores_a_licence_number_as_the_api_does(staff_client, agency):
    driver = DriverFactory(client=ClientFactory(agency=agency), license_number="TX100")
    response = change(staff_client, driver, license_number=" tx12345 ")
    assert response.status_code == 302, response.content.decode()[:3000]
    driver.refresh_from_db()
    assert driver.license_number == "TX12345"


def test_vehicle_form_refuses_a_lienholder_of_another_agency(staff_client, agency, other_agency):
    unit = VehicleFactory(client=ClientFactory(agency=agency))
    foreign_bank = LienholderFactory(agency=other_agency, name="Faraway Bank")
    response = change(staff_client, unit, lienholder=foreign_bank.pk)
    assert response.status_code == 200
    unit.refresh_from_db()
    assert unit.lienholder_id is None


def test_vehicle_saved_in_the_admin_records_its_author(staff_client, agency):
    unit = VehicleFactory(client=ClientFactory(agency=agency), unit="77")
    response = change(staff_client, unit, unit="78")
    assert response.status_code == 302, response.content.decode()[:3000]
    unit.refresh_from_db()
    assert (unit.unit, unit.updated_by) == ("78", staff_client.user)


def test_ending_a_unit_in_the_admin_appends_to_the_event_log(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    period = VehicleCoverageFactory(
        vehicle=VehicleFactory(client=carrier), policy=PolicyFactory(client=carrier)
    )
    removed = period.policy_added_date + dt.timedelta(days=10)
    response = change(
        staff_client, period, coverage_status=1, policy_removed_date=removed.isoformat()
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    period.refresh_from_db()
    assert (period.coverage_status, period.policy_removed_date) == (1, removed)
    event = CoverageEvent.objects.get(vehicle_coverage=period)
    assert (event.coverage_status, event.effective_date, event.created_by) == (
        1,
        removed,
        staff_client.user,
    )


def test_scheduling_in_the_admin_refuses_a_policy_of_another_client(staff_client, agency):
    unit = VehicleFactory(client=ClientFactory(agency=agency))
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    page = staff_client.get("/admin/coverages/vehiclecoverage/add/").content.decode()
    data = form_data(
        page,
        vehicle=unit.pk,
        policy=policy.pk,
        policy_added_date=policy.effective_date.isoformat(),
    )
    response = staff_client.post("/admin/coverages/vehiclecoverage/add/", data)
    assert response.status_code == 200
    assert "belong to different clients" in response.content.decode()
    assert not VehicleCoverage.objects.filter(vehicle=unit).exists()


def test_scheduling_in_the_admin_before_the_policy_starts_names_the_start(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    unit, policy = VehicleFactory(client=carrier), PolicyFactory(client=carrier)
    page = staff_client.get("/admin/coverages/vehiclecoverage/add/").content.decode()
    data = form_data(
        page,
        vehicle=unit.pk,
        policy=policy.pk,
        policy_added_date=(policy.effective_date - dt.timedelta(days=1)).isoformat(),
    )
    response = staff_client.post("/admin/coverages/vehiclecoverage/add/", data)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["policy_added_date"] == [
        f"Must be inside the policy term ({policy.effective_date} to {policy.ends_on}): the "
        f"policy starts on {policy.effective_date}."
    ]
    assert not VehicleCoverage.objects.filter(vehicle=unit).exists()


def test_an_earlier_period_is_history_and_cannot_be_changed(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    unit, policy = VehicleFactory(client=carrier), PolicyFactory(client=carrier)
    first = VehicleCoverageFactory(
        vehicle=unit,
        policy=policy,
        coverage_status=1,
        policy_removed_date=policy.effective_date + dt.timedelta(days=5),
    )
    VehicleCoverageFactory(
        vehicle=unit, policy=policy, policy_added_date=policy.effective_date + dt.timedelta(days=9)
    )
    url = f"/admin/coverages/vehiclecoverage/{first.pk}/change/"
    response = staff_client.post(url, {"coverage_status": 4})
    assert response.status_code == 403
    first.refresh_from_db()
    assert first.coverage_status == 1


def test_a_document_record_cannot_be_edited_around_the_api(staff_client, agency, manager):
    content = b"%PDF-1.4 evidence"
    document = document_upload(
        user=manager,
        module=Module.CLIENT,
        owner_id=ClientFactory(agency=agency).id,
        file=ContentFile(content, name="coi.pdf"),
        sha256=hashlib.sha256(content).hexdigest(),
        description="Original",
    )
    url = f"/admin/documents/document/{document.pk}/change/"
    assert staff_client.get(url).status_code == 200  # shown, with its download link
    assert staff_client.post(url, {"description": "Rewritten"}).status_code == 403
    document.refresh_from_db()
    assert document.description == "Original"


@pytest.mark.parametrize("factory", [VehicleFactory, DriverFactory])
def test_no_hard_delete_around_the_services(staff_client, agency, factory):
    record = factory(client=ClientFactory(agency=agency))
    meta = record._meta
    url = f"/admin/{meta.app_label}/{meta.model_name}/{record.pk}/delete/"
    assert staff_client.post(url, {"post": "yes"}).status_code == 403
    assert type(record).objects.filter(pk=record.pk).exists()
    change_page = staff_client.get(f"/admin/{meta.app_label}/{meta.model_name}/{record.pk}/change/")
    assert 'class="deletelink"' not in change_page.content.decode()


def test_an_ended_period_cannot_end_later_in_the_admin(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    period = VehicleCoverageFactory(
        vehicle=VehicleFactory(client=carrier), policy=PolicyFactory(client=carrier)
    )
    removed = period.policy_added_date + dt.timedelta(days=10)
    change(staff_client, period, coverage_status=1, policy_removed_date=removed.isoformat())
    later = removed + dt.timedelta(days=20)  # both dates have come: the policy began 100 days ago

    response = change(
        staff_client, period, coverage_status=1, policy_removed_date=later.isoformat()
    )
    assert response.status_code == 200
    assert "an end that has come may only move earlier" in response.content.decode()
    period.refresh_from_db()
    assert period.policy_removed_date == removed
    assert CoverageEvent.objects.filter(vehicle_coverage=period).count() == 1  # the removal


def test_a_policy_with_a_unit_cannot_change_client_in_the_admin(staff_client, agency):
    carrier, other = ClientFactory(agency=agency), ClientFactory(agency=agency)
    policy = PolicyFactory(client=carrier)
    VehicleCoverageFactory(vehicle=VehicleFactory(client=carrier), policy=policy)

    response = change(staff_client, policy, client=other.pk)
    assert response.status_code == 200
    assert "cannot move to another client" in response.content.decode()
    policy.refresh_from_db()
    assert policy.client_id == carrier.pk


def test_a_periods_status_offers_only_the_statuses_of_its_kind(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    period = VehicleCoverageFactory(
        vehicle=VehicleFactory(client=carrier), policy=PolicyFactory(client=carrier)
    )
    page = staff_client.get(f"/admin/coverages/vehiclecoverage/{period.pk}/change/")
    offered = {v for v, _label in page.context["adminform"].form.fields["coverage_status"].choices}
    assert offered - {""} == {1, 2, 4}


def test_a_drivers_city_stays_in_its_state_in_the_admin(staff_client, agency):
    # The city and the state are picked apart on the form: the service holds them together.
    dallas = City.objects.get(name="Dallas", state__code="TX")
    driver = DriverFactory(client=ClientFactory(agency=agency), state=dallas.state, city=dallas)
    omaha = City.objects.get(name="Omaha", state__code="NE")

    response = change(staff_client, driver, city=omaha.pk)
    assert response.status_code == 200
    assert "Omaha, NE is not in Texas." in response.content.decode()
    response = change(staff_client, driver, state=omaha.state_id)
    assert "Dallas, TX is not in Nebraska." in response.content.decode()
    driver.refresh_from_db()
    assert (driver.state_id, driver.city_id) == (dallas.state_id, dallas.pk)


def test_a_clients_mailing_city_stays_in_its_state_in_the_admin(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    omaha = City.objects.get(name="Omaha", state__code="NE")

    response = change(staff_client, carrier, mailing_state=carrier.state_id, mailing_city=omaha.pk)
    assert response.status_code == 200
    assert "Omaha, NE is not in Texas." in response.content.decode()
    carrier.refresh_from_db()
    assert carrier.mailing_city_id is None


def test_a_model_year_too_far_ahead_is_refused_in_the_admin_as_in_the_api(staff_client, agency):
    # The API's serializer alone held the rule: the admin's form saved a 2099 model.
    unit = VehicleFactory(client=ClientFactory(agency=agency), model_year=2021)
    response = change(staff_client, unit, model_year=str(today().year + 3))
    assert response.status_code == 200
    assert "Model year is too far in the future." in response.content.decode()
    unit.refresh_from_db()
    assert unit.model_year == 2021
    assert change(staff_client, unit, model_year=str(today().year + 2)).status_code == 302
    unit.refresh_from_db()
    assert unit.model_year == today().year + 2


def _removed_today(api, subject: str, target, policy) -> None:
    """Scheduled a week ago and removed today, over the API (what another tab did)."""
    body = {f"{subject}Id": target.id, "policyId": policy.id}
    added = (today() - dt.timedelta(days=7)).isoformat()
    created = api.post(f"/v1/{subject}s/coverages", {**body, "policyAddedDate": added}, "json")
    assert created.status_code == 201, created.content
    removed = api.put(f"/v1/{subject}s/coverages", {**body, "coverageStatus": 1}, "json")
    assert removed.status_code == 200, removed.content


SCHEDULE_AGAIN = {
    "vehicle": "(Add vehicle coverage, or the vehicles' Assign action)",
    "driver": "(Add driver coverage)",
}


@pytest.mark.parametrize("subject", ["vehicle", "driver"])
def test_a_removed_period_tells_staff_how_to_schedule_again_in_the_admin(
    api, staff_client, agency, subject
):
    carrier = ClientFactory(agency=agency)
    if subject == "vehicle":
        target, line, status = VehicleFactory(client=carrier), "AL", 4
    else:
        target, line, status = DriverFactory(client=carrier), "OA", 7
    policy = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code=line))
    _removed_today(api, subject, target, policy)
    period = target.coverages.get()
    noun = "unit" if subject == "vehicle" else "driver"
    how = SCHEDULE_AGAIN[subject]

    moved = change(
        staff_client,
        period,
        coverage_status=status,
        policy_added_date=(today() - dt.timedelta(days=3)).isoformat(),
    )
    assert moved.status_code == 200
    assert moved.context["adminform"].form.errors["coverage_status"] == [
        f"The {noun} was removed or declined; schedule it again {how}."
    ]
    declined = change(staff_client, period, coverage_status=2)
    assert declined.status_code == 200
    assert declined.context["adminform"].form.errors["coverage_status"] == [
        f"The {noun} was removed or declined on {today().isoformat()}; an end that has come "
        f"may only move earlier. Schedule it again {how}."
    ]

    # The API, for the same refusal, names its own way: POST.
    body = {f"{subject}Id": target.id, "policyId": policy.id, "coverageStatus": status}
    body["policyAddedDate"] = (today() - dt.timedelta(days=3)).isoformat()
    refused = api.put(f"/v1/{subject}s/coverages", body, "json")
    assert refused.status_code == 400
    assert {e["field"]: e["message"] for e in refused.json()["errors"]} == {
        "coverageStatus": f"The {noun} was removed or declined; schedule it again with POST."
    }
