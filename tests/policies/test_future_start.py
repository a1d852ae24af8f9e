"""A future policy's units and drivers are scheduled from its effective date (contract section
10: a date sent is ignored), so when the insurer moves that date before the policy starts, the
periods move with it: a unit booked on a renewal starting January 1st that now starts December
15th is covered from December 15th, not from January 1st (a gap verification would answer)."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.coverages.models import CoverageEvent
from apps.masterdata.models import CoverageType
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.coverages.test_coverages import assign, change
from tests.coverages.test_period_history import days, verified
from tests.factories import DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


@pytest.fixture
def renewal(carrier):
    return PolicyFactory(
        client=carrier, effective_date=today() + 30 * DAY, expiration_date=today() + 395 * DAY
    )


def move_start(api, policy, n: int):
    return api.put(f"/v1/policies/{policy.id}", {"effectiveDate": days(n)}, format="json")


def test_moved_earlier_the_units_are_covered_from_the_new_start(api, carrier, renewal):
    units = [VehicleFactory(client=carrier) for _ in range(3)]
    for unit in units:
        assert assign(api, unit, renewal).json()["policyAddedDate"] == days(30)
    logged = CoverageEvent.objects.count()

    moved = move_start(api, renewal, 15)
    assert moved.status_code == 200, moved.content

    listed = api.get(f"/v1/policies/{renewal.id}/vehicles").json()["results"]
    assert {u["policyAddedDate"] for u in listed} == {days(15)}
    assert [verified(api, units[0], days(n)) for n in (14, 15, 29, 30)] == [False, True, True, True]
    # Each period's move is in its log and in the change feed, as a reschedule is.
    assert CoverageEvent.objects.count() == logged + 3
    feed = api.get("/v1/events?type=vehicle.rescheduled").json()["results"]
    assert sorted(e["data"]["vehicleId"] for e in feed) == sorted(u.id for u in units)
    assert {e["data"]["policyAddedDate"] for e in feed} == {days(15)}


def test_moved_later_no_period_starts_before_it(api, carrier, renewal):
    unit = VehicleFactory(client=carrier)
    assign(api, unit, renewal)
    assert move_start(api, renewal, 45).status_code == 200
    [listed] = api.get(f"/v1/policies/{renewal.id}/vehicles").json()["results"]
    assert listed["policyAddedDate"] == days(45)
    assert [verified(api, unit, days(n)) for n in (30, 44, 45)] == [False, False, True]


def test_a_period_ended_before_the_new_start_refuses_the_move(api, carrier, renewal):
    unit = VehicleFactory(client=carrier)
    assign(api, unit, renewal)
    assert change(api, unit, renewal, 1, policyRemovedDate=days(40)).status_code == 200

    refused = assert_problem(move_start(api, renewal, 41), 400)
    assert field_errors(refused) == {
        "effectiveDate": f"A unit was removed from this policy on {days(40)}, before this "
        "date; its period would end before it starts."
    }
    renewal.refresh_from_db()
    assert renewal.effective_date == today() + 30 * DAY
    # Up to the day it ended, the move is fine (the period then covers no day).
    assert move_start(api, renewal, 40).status_code == 200


def test_a_drivers_period_follows_too(api, carrier):
    renewal = PolicyFactory(
        client=carrier,
        effective_date=today() + 30 * DAY,
        coverage_type=CoverageType.objects.get(code="OA"),
    )
    driver = DriverFactory(client=carrier)
    body = {"driverId": driver.id, "policyId": renewal.id}
    assert api.post("/v1/drivers/coverages", body, format="json").status_code == 201
    assert move_start(api, renewal, 10).status_code == 200
    assert renewal.driver_coverages.get().policy_added_date == today() + 10 * DAY


def test_a_policy_already_in_force_keeps_the_dates_it_was_sent(api, carrier):
    # An active policy's periods carry the dates the integrator chose: they stay.
    policy = PolicyFactory(client=carrier)  # started 100 days ago
    unit = VehicleFactory(client=carrier)
    assign(api, unit, policy, policyAddedDate=days(-50))
    moved = api.put(f"/v1/policies/{policy.id}", {"effectiveDate": days(-120)}, format="json")
    assert moved.status_code == 200, moved.content
    [listed] = api.get(f"/v1/policies/{policy.id}/vehicles").json()["results"]
    assert listed["policyAddedDate"] == days(-50)


@pytest.mark.parametrize("n", [15, 45])
def test_a_unit_removed_before_the_start_stays_uncovered_wherever_the_start_moves(
    api, carrier, renewal, n
):
    # Removed without a date before the renewal started, its period is its first day alone:
    # it follows the start whole (never a day covered), and does not refuse a later start.
    unit = VehicleFactory(client=carrier)
    assign(api, unit, renewal)
    removed = change(api, unit, renewal, 1)
    assert removed.json()["policyRemovedDate"] == days(30)

    moved = move_start(api, renewal, n)
    assert moved.status_code == 200, moved.content
    [listed] = api.get(f"/v1/policies/{renewal.id}/vehicles").json()["results"]
    assert (listed["policyAddedDate"], listed["policyRemovedDate"]) == (days(n), days(n))
    assert [verified(api, unit, days(d)) for d in (n, 20, 30, 50)] == [False] * 4
