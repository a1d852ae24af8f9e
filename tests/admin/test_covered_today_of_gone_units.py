"""The back office's "covered today" is verification's answer: a unit of a soft-deleted client
is found by no verification, so no list, column, page or count of the back office calls it
covered (the one rule, apps.coverages.models.periods_covering; its SQL form,
apps.coverages.selectors.covered_today_filter)."""

from __future__ import annotations

import re

import pytest

from apps.clients.services import client_update
from tests.factories import ClientFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleets(staff_client, agency):
    """A live carrier with a covered unit and a bare one; a soft-deleted carrier likewise."""
    units = {}
    for prefix, name in (("L", "Live Carrier"), ("G", "Gone Carrier")):
        carrier = ClientFactory(agency=agency, client_name=name)
        covered = VehicleFactory(client=carrier, unit=f"{prefix}-COVERED")
        VehicleCoverageFactory(vehicle=covered, policy=PolicyFactory(client=carrier))
        units[prefix] = (carrier, covered, VehicleFactory(client=carrier, unit=f"{prefix}-BARE"))
    client_update(user=staff_client.user, instance=units["G"][0], deleted=True)
    return units


def _listed(staff_client, query: str = "") -> dict[str, bool]:
    """The units of the vehicle list (`query` its filters) and their "covered today" column."""
    changelist = staff_client.get(f"/admin/vehicles/vehicle/{query}").context["cl"]
    return {unit.unit: unit.covered_today for unit in changelist.result_list}


def test_verification_finds_no_unit_of_the_deleted_client(api, fleets):
    _, covered, bare = fleets["G"]
    for unit in (covered, bare):
        assert api.get(f"/v1/coverages/vehicles?vin={unit.serial_number}").status_code == 404
    live = api.get(f"/v1/coverages/vehicles?vin={fleets['L'][1].serial_number}").json()
    assert live["results"][0]["status"] == "ACTIVE"


def test_the_vehicle_lists_column_calls_no_unit_of_the_deleted_client_covered(staff_client, fleets):
    assert _listed(staff_client) == {
        "L-COVERED": True,
        "L-BARE": False,
        "G-COVERED": False,
        "G-BARE": False,
    }


def test_the_covered_filter_lists_the_units_verification_answers_for(staff_client, fleets):
    assert _listed(staff_client, "?covered=yes") == {"L-COVERED": True}
    assert _listed(staff_client, "?covered=no") == {"L-BARE": False}


def test_the_dashboards_counts_are_the_lists_they_link_to(staff_client, fleets):
    tiles = {t["label"]: t for t in staff_client.get("/admin/").context["dashboard"]}
    for label, listed in (("Units in force", ["L-COVERED"]), ("Units not covered", ["L-BARE"])):
        tile = tiles[label]
        assert tile["count"] == len(listed)
        assert list(_listed(staff_client, "?" + tile["url"].split("?")[1])) == listed


def test_the_deleted_clients_page_calls_none_of_its_units_covered(staff_client, fleets):
    carrier = fleets["G"][0]
    page = staff_client.get(f"/admin/clients/client/{carrier.pk}/change/").content.decode()
    assert re.findall(r">\s*(NOT covered|Covered)\s*<", page) == ["NOT covered", "NOT covered"]
    assert re.search(r'id="units-covered"[^>]*>0 covered<', page)
    assert re.search(r'id="units-not-covered"[^>]*>0 not covered<', page)


def test_the_live_clients_page_counts_its_units(staff_client, fleets):
    carrier = fleets["L"][0]
    page = staff_client.get(f"/admin/clients/client/{carrier.pk}/change/").content.decode()
    assert sorted(re.findall(r">\s*(NOT covered|Covered)\s*<", page)) == ["Covered", "NOT covered"]
    assert re.search(r'id="units-covered"[^>]*>1 covered<', page)
    assert re.search(r'id="units-not-covered"[^>]*>1 not covered<', page)
