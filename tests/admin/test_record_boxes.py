"""The admin's policy, unit and driver boxes (autocomplete) offer what their form's save takes.

A scheduling (a coverage period) and a driver link name a live policy, unit or driver of a
live client (`live_reference`): their forms' boxes offer those only, where a deleted policy or
unit, and the records of a deleted client, were offered and then refused on save. The premium
report form takes a deleted policy (a report of a policy that was cancelled and deleted), so
its box still offers every policy.

Each box is asked as the admin's script asks it, from the page's `<select>` (`box`, `offered`
of tests/admin/test_client_boxes.py), with an empty term: every record the box offers.
"""

from __future__ import annotations

import pytest

from tests.admin.test_client_boxes import _Boxes, offered
from tests.conftest import staff_member
from tests.factories import ClientFactory, DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(client, groups, agency, other_agency):
    client.force_login(staff_member([agency], groups, "records"))
    alpha = ClientFactory(agency=agency, client_name="Alpha Haul", dot="5300001")
    gone = ClientFactory(agency=agency, client_name="Gone Haul", dot="5300002", deleted=True)
    rival = ClientFactory(agency=other_agency, client_name="Rival Haul", dot="5300003")
    records = {
        "policy": PolicyFactory(client=alpha, policy_number="LIVE"),
        "deleted policy": PolicyFactory(client=alpha, policy_number="DELETED", deleted=True),
        "deleted client's policy": PolicyFactory(client=gone, policy_number="GONE"),
        "unit": VehicleFactory(client=alpha, unit="LIVE"),
        "deleted unit": VehicleFactory(client=alpha, unit="DELETED", deleted=True),
        "deleted client's unit": VehicleFactory(client=gone, unit="GONE"),
        "driver": DriverFactory(client=alpha, first_name="Live", last_name="Driver"),
        "deleted client's driver": DriverFactory(
            client=gone, first_name="Gone", last_name="Driver"
        ),
    }
    PolicyFactory(client=rival, policy_number="RIVAL")
    VehicleFactory(client=rival, unit="RIVAL")
    return client, records


def page_box(staff, path: str, name_ends: str) -> dict:
    """The autocomplete `<select>` of the page whose name ends with `name_ends` (an inline's
    row template is named `<prefix>-__prefix__-<field>`)."""
    response = staff.get(path)
    assert response.status_code == 200, path
    reader = _Boxes()
    reader.feed(response.content.decode())
    (found,) = (attrs for name, attrs in reader.boxes.items() if name.endswith(name_ends))
    return found


def names(records: dict, *keys: str) -> list[str]:
    return sorted(str(records[key]) for key in keys)


@pytest.mark.parametrize("form", ["vehiclecoverage", "drivercoverage"])
def test_a_scheduling_forms_policy_box_offers_live_policies_of_live_clients(world, form):
    staff, records = world
    policy_box = page_box(staff, f"/admin/coverages/{form}/add/", "policy")
    assert offered(staff, policy_box, term="") == names(records, "policy")


def test_a_unit_scheduling_forms_unit_box_offers_live_units_of_live_clients(world):
    staff, records = world
    unit_box = page_box(staff, "/admin/coverages/vehiclecoverage/add/", "vehicle")
    assert offered(staff, unit_box, term="") == names(records, "unit")


def test_a_driver_scheduling_forms_driver_box_offers_drivers_of_live_clients(world):
    staff, records = world
    driver_box = page_box(staff, "/admin/coverages/drivercoverage/add/", "driver")
    assert offered(staff, driver_box, term="") == names(records, "driver")


def test_the_driver_link_rows_unit_box_offers_live_units_of_live_clients(world):
    staff, records = world
    driver = records["driver"]
    unit_box = page_box(staff, f"/admin/drivers/driver/{driver.pk}/change/", "-vehicle")
    assert offered(staff, unit_box, term="") == names(records, "unit")


def test_the_report_forms_policy_box_still_offers_deleted_policies(world):
    staff, records = world
    policy_box = page_box(staff, "/admin/reports/policypremiumreport/add/", "policy")
    expected = names(records, "policy", "deleted policy", "deleted client's policy")
    assert offered(staff, policy_box, term="") == expected


def test_the_driver_link_rows_unit_box_offers_the_drivers_clients_units_only(world, agency):
    """A driver drives units of their own client (the link's save refuses another client's):
    on a driver's page the box offers that client's live units, not those of the agency's other
    clients."""
    staff, records = world
    other = ClientFactory(agency=agency, client_name="Other Haul", dot="5300004")
    other_unit = VehicleFactory(client=other, unit="OTHER")
    other_driver = DriverFactory(client=other, first_name="Other", last_name="Driver")
    for driver, units in (
        (records["driver"], names(records, "unit")),
        (other_driver, [str(other_unit)]),
    ):
        unit_box = page_box(staff, f"/admin/drivers/driver/{driver.pk}/change/", "-vehicle")
        assert offered(staff, unit_box, term="") == units, driver


@pytest.mark.parametrize("mark", ["client", "editing"])
@pytest.mark.parametrize("value", ["9223372036854775808", "9999999999999999999", "0"])
def test_a_boxs_record_mark_that_is_no_id_is_ignored(world, mark, value):
    """A box's marks name a record by id (`?client=`, `?editing=`); a value no id can have
    (past 2^63-1 within 19 digits, or 0) is no mark: the box answers as without it, never 500
    (SQLite cannot even bind a number past 2^63-1)."""
    staff, records = world
    path = (
        "/admin/autocomplete/?term=&app_label=drivers&model_name=drivervehicle&field_name=vehicle"
    )
    plain = staff.get(path)
    marked = staff.get(f"{path}&{mark}={value}")
    assert marked.status_code == plain.status_code == 200
    assert marked.json() == plain.json()


def test_a_version_id_past_the_largest_key_is_no_page(world):
    staff, records = world
    client_id = records["policy"].client_id
    response = staff.get(f"/admin/clients/client/{client_id}/history/9223372036854775808/")
    assert response.status_code == 404
