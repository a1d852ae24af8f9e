"""A computed report bills the units the vehicle detail bills: a live unit of a live client.

The report billed and counted a soft-deleted unit, and the units of a deleted client, while the
vehicle detail said `covered: false` with no premium and verification did not find them. It
follows the detail's live-unit rule now (`apps.coverages.models.unit_live`); a snapshot frozen
before the deletion keeps what it answered.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from apps.masterdata.models import UnitType
from apps.policies.models import PolicyRate
from apps.reports.services import premium_report_create
from tests.factories import ClientFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db
D = dt.date


@pytest.fixture
def fleet(agency):
    """Two tractors rated 3,650 a year, scheduled all November 2026 (300.00 each)."""
    carrier = ClientFactory(agency=agency, client_name="Lone Star Freight", dot="1234567")
    policy = PolicyFactory(
        client=carrier, effective_date=D(2026, 1, 1), expiration_date=D(2027, 1, 1)
    )
    tractor = UnitType.objects.get(name="Tractor")
    PolicyRate.objects.create(policy=policy, unit_type=tractor, annual_rate=Decimal("3650"))
    units = [VehicleFactory(client=carrier, unit=unit, unit_type=tractor) for unit in ("1", "2")]
    for unit in units:
        VehicleCoverageFactory(vehicle=unit, policy=policy, policy_added_date=D(2026, 1, 1))
    return policy, units


def put(api, path: str, body: dict) -> None:
    response = api.put(path, body, format="json")
    assert response.status_code == 200, response.content


def billed(api, report) -> tuple[list[str], int, str]:
    """The units in tableData, unitCount and totalPremium of the report's raw data."""
    response = api.get(f"/v1/reports/{report.id}/raw-data")
    assert response.status_code == 200, response.content
    body = response.json()
    mapping = body["premiumMapping"]
    return [row["unit"] for row in body["tableData"]], mapping["unitCount"], mapping["totalPremium"]


def test_a_deleted_unit_is_not_in_a_computed_report_and_a_restored_one_is_again(api, fleet):
    policy, (one, two) = fleet
    report = premium_report_create(user=None, policy=policy, period="2026-11")
    assert billed(api, report) == (["1", "2"], 2, "600.00")
    put(api, f"/v1/vehicles/{two.id}", {"deleted": True})
    assert api.get(f"/v1/vehicles/{two.id}").json()["billing"]["premiums"] == []
    assert billed(api, report) == (["1"], 1, "300.00")
    put(api, f"/v1/vehicles/{two.id}", {"deleted": False})
    assert billed(api, report) == (["1", "2"], 2, "600.00")


def test_the_units_of_a_deleted_client_are_not_in_a_computed_report(api, fleet):
    policy, _units = fleet
    report = premium_report_create(user=None, policy=policy, period="2026-11")
    put(api, f"/v1/clients/{policy.client_id}", {"deleted": True})
    assert billed(api, report) == ([], 0, "0.00")
    put(api, f"/v1/clients/{policy.client_id}", {"deleted": False})
    assert billed(api, report) == (["1", "2"], 2, "600.00")


def test_a_snapshot_frozen_before_the_deletion_keeps_the_unit(api, fleet):
    policy, (_one, two) = fleet
    frozen = premium_report_create(user=None, policy=policy, period="2026-11", snapshot=True)
    before = api.get(f"/v1/reports/{frozen.id}/raw-data").json()
    put(api, f"/v1/vehicles/{two.id}", {"deleted": True})
    assert api.get(f"/v1/reports/{frozen.id}/raw-data").json() == before
    assert billed(api, frozen) == (["1", "2"], 2, "600.00")


def test_a_snapshot_frozen_after_the_deletion_leaves_the_unit_out(api, fleet):
    policy, (_one, two) = fleet
    put(api, f"/v1/vehicles/{two.id}", {"deleted": True})
    frozen = premium_report_create(user=None, policy=policy, period="2026-11", snapshot=True)
    assert billed(api, frozen) == (["1"], 1, "300.00")
