"""A removal or decline takes effect inside the policy's term; a new period starts inside it.

A removal dated after the policy's end (its expiration, or a cancellation that comes first) was
accepted: `policyRemovedDate` 9999-12-31 on a policy expiring next year answered 200, a driver
so declined showed "Coverage declined" while covered for the whole term, and scheduling the
pair again was refused for good ("Cannot precede the end of an earlier period on this policy
(9999-12-31)"). On a future policy, a period removed after the policy's end made the next
`POST` open a period starting after the end (its start follows the earlier end): listed as
scheduled, announced, and never covering a day. Both are 400 now, naming the bound as the
added-date check does.
"""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.coverages.models import DriverCoverage, VehicleCoverage
from apps.events.models import Event
from apps.masterdata.models import CoverageType
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


@pytest.fixture
def unit(carrier):
    return VehicleFactory(client=carrier)


def assign(api, unit, policy, **extra):
    body = {"vehicleId": unit.id, "policyId": policy.id, **extra}
    return api.post("/v1/vehicles/coverages", body, format="json")


def change(api, unit, policy, status, **extra):
    body = {"vehicleId": unit.id, "policyId": policy.id, "coverageStatus": status, **extra}
    return api.put("/v1/vehicles/coverages", body, format="json")


def past_the_end(policy) -> str:
    return (
        f"Must be inside the policy term ({policy.effective_date} to {policy.ends_on}): "
        f"the policy ends on {policy.ends_on}."
    )


@pytest.mark.parametrize("status", [1, 2])
@pytest.mark.parametrize("removed", ["day-after-end", "9999-12-31"])
def test_a_removal_or_decline_after_the_policy_expires_is_400(api, carrier, unit, status, removed):
    policy = PolicyFactory(client=carrier)
    assert assign(api, unit, policy, policyAddedDate=str(today())).status_code == 201
    date = str(policy.expiration_date + DAY) if removed == "day-after-end" else removed
    response = change(api, unit, policy, status, policyRemovedDate=date)
    errors = field_errors(assert_problem(response, 400))
    assert errors == {"policyRemovedDate": past_the_end(policy)}
    period = VehicleCoverage.objects.get()
    assert (period.coverage_status, period.policy_removed_date) == (4, None)


def test_a_removal_on_the_policys_last_covered_day_or_its_end_is_accepted(api, carrier, unit):
    policy = PolicyFactory(client=carrier)
    assert assign(api, unit, policy, policyAddedDate=str(today())).status_code == 201
    last_day = str(policy.expiration_date - DAY)
    response = change(api, unit, policy, 1, policyRemovedDate=last_day)
    assert response.status_code == 200, response.content
    # An end still ahead moves either way, up to the policy's end (the first day it is out of
    # force: the unit covered through its last day), not past it.
    end = str(policy.expiration_date)
    response = change(api, unit, policy, 1, policyRemovedDate=end)
    assert response.status_code == 200, response.content
    assert response.json()["policyRemovedDate"] == end
    later = change(api, unit, policy, 2, policyRemovedDate=str(policy.expiration_date + DAY))
    assert field_errors(assert_problem(later, 400)) == {"policyRemovedDate": past_the_end(policy)}
    assert VehicleCoverage.objects.get().policy_removed_date == policy.expiration_date


def test_a_removal_after_a_cancellation_that_comes_first_is_400(api, carrier, unit):
    policy = PolicyFactory(client=carrier, cancellation_date=today() + 10 * DAY)
    assert assign(api, unit, policy, policyAddedDate=str(today())).status_code == 201
    after = change(api, unit, policy, 1, policyRemovedDate=str(policy.cancellation_date + DAY))
    assert field_errors(assert_problem(after, 400)) == {
        "policyRemovedDate": (
            f"Must be inside the policy term ({policy.effective_date} to "
            f"{policy.cancellation_date}): the policy ends on {policy.cancellation_date}."
        )
    }
    on_it = change(api, unit, policy, 1, policyRemovedDate=str(policy.cancellation_date))
    assert on_it.status_code == 200, on_it.content


def test_a_removal_without_a_date_of_a_policy_that_has_ended_takes_its_end(api, carrier, unit):
    # Removed without a date, a unit is removed today; on a policy that ended before today,
    # on the policy's end: it was not covered a day later anyway.
    policy = PolicyFactory(
        client=carrier, effective_date=today() - 400 * DAY, expiration_date=today() - 35 * DAY
    )
    VehicleCoverage.objects.create(
        vehicle=unit, policy=policy, coverage_status=4, policy_added_date=policy.effective_date
    )
    response = change(api, unit, policy, 1)
    assert response.status_code == 200, response.content
    assert response.json()["policyRemovedDate"] == str(policy.expiration_date)


def test_a_driver_decline_after_the_policy_ends_is_400(api, carrier):
    oa = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="OA"))
    driver = DriverFactory(client=carrier)
    body = {"driverId": driver.id, "policyId": oa.id}
    created = api.post(
        "/v1/drivers/coverages", {**body, "policyAddedDate": str(today())}, format="json"
    )
    assert created.status_code == 201, created.content
    declined = api.put(
        "/v1/drivers/coverages",
        {**body, "coverageStatus": 2, "policyRemovedDate": "9999-12-31"},
        format="json",
    )
    assert field_errors(assert_problem(declined, 400)) == {"policyRemovedDate": past_the_end(oa)}
    period = DriverCoverage.objects.get()
    assert (period.coverage_status, period.policy_removed_date) == (7, None)
    assert api.get(f"/v1/drivers/{driver.id}").json()["verified"] is True


@pytest.fixture
def future(carrier):
    start = today() + 60 * DAY
    return PolicyFactory(client=carrier, effective_date=start, expiration_date=start + 92 * DAY)


def test_a_future_policys_unit_is_not_removed_after_the_policy_ends(api, unit, future):
    assert assign(api, unit, future).status_code == 201
    after = change(api, unit, future, 1, policyRemovedDate=str(future.expiration_date + 92 * DAY))
    assert field_errors(assert_problem(after, 400)) == {"policyRemovedDate": past_the_end(future)}


def test_a_future_policys_unit_removed_at_its_end_is_not_scheduled_again_past_it(api, unit, future):
    """Scheduled again, a future policy's unit starts where its earlier period ended: when that
    is the policy's end, there is no day left to schedule it from."""
    assert assign(api, unit, future).status_code == 201
    removed = change(api, unit, future, 1, policyRemovedDate=str(future.expiration_date))
    assert removed.status_code == 200, removed.content
    events = Event.objects.count()
    again = assign(api, unit, future)
    assert field_errors(assert_problem(again, 400)) == {
        "policyAddedDate": (
            f"Must be inside the policy term ({future.effective_date} to "
            f"{future.expiration_date}): the policy ends on {future.expiration_date}."
        )
    }
    assert VehicleCoverage.objects.count() == 1
    assert Event.objects.count() == events
    listed = api.get(f"/v1/policies/{future.id}/vehicles").json()["results"]
    assert [(v["id"], v["coverageStatus"]) for v in listed] == [(unit.id, 1)]


def test_a_future_policys_unit_removed_inside_the_term_is_scheduled_again_from_there(
    api, unit, future
):
    assert assign(api, unit, future).status_code == 201
    ended = future.effective_date + 10 * DAY
    assert change(api, unit, future, 1, policyRemovedDate=str(ended)).status_code == 200
    again = assign(api, unit, future)
    assert again.status_code == 201, again.content
    assert again.json()["policyAddedDate"] == str(ended)


def test_a_period_starting_after_a_later_cancellation_is_removed_on_its_first_day(
    api, carrier, unit
):
    """A policy cancelled after a unit was scheduled from a later day: the period never covers a
    day, and is removed on its first day (without a date, too), not later."""
    policy = PolicyFactory(client=carrier)
    added = today() + 20 * DAY
    assert assign(api, unit, policy, policyAddedDate=str(added)).status_code == 201
    cancelled = today() + 10 * DAY
    body = {"cancellationDate": str(cancelled)}
    assert api.put(f"/v1/policies/{policy.id}", body, format="json").status_code == 200
    policy.refresh_from_db()
    later = change(api, unit, policy, 1, policyRemovedDate=str(added + DAY))
    assert field_errors(assert_problem(later, 400)) == {"policyRemovedDate": past_the_end(policy)}
    response = change(api, unit, policy, 1)
    assert response.status_code == 200, response.content
    assert response.json()["policyRemovedDate"] == str(added)
