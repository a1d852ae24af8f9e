"""A policy's expiration may not move to or before the start of a period scheduled on it.

Moved there (`PUT /v1/policies/{id}`, the admin), the period stayed: the unit's schedule listed
a period wholly outside the term, which never covers a day. The move is a 400 on
`expirationDate` naming how many units or drivers are scheduled to start on or after the new
date, so nothing is dropped silently: staff remove them first (a removal on the period's first
day leaves a period that never covered a day, which no longer counts), or choose a later date.
Whatever the stored periods say, verification and the vehicle detail agree: a unit is covered
only inside the policy's term, also by a period removed after the policy's (moved) end.
"""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.events.models import Event
from apps.masterdata.models import CoverageType
from tests.admin.test_one_door import change as admin_change
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.coverages.test_coverages import assign, change
from tests.coverages.test_period_history import days, verified
from tests.factories import (
    ClientFactory,
    DriverFactory,
    PolicyFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


@pytest.fixture
def policy(carrier):
    return PolicyFactory(client=carrier)  # in force from 100 days ago, for a year


def expire_on(api, policy, n: int):
    return api.put(f"/v1/policies/{policy.id}", {"expirationDate": days(n)}, format="json")


def refusal(count: str, first: int) -> str:
    return (
        f"{count} scheduled on this policy to start on or after this date (the first on "
        f"{days(first)}): remove them from the policy first, or choose a later date; a period "
        "cannot start after the policy ends."
    )


def test_an_expiration_moved_to_or_before_scheduled_starts_is_400_naming_how_many(
    api, carrier, policy
):
    early, late, later = (VehicleFactory(client=carrier) for _ in range(3))
    for unit, start in ((early, -50), (late, 100), (later, 120)):
        assert assign(api, unit, policy, policyAddedDate=days(start)).status_code == 201
    announced = Event.objects.count()

    refused = assert_problem(expire_on(api, policy, 90), 400)
    assert field_errors(refused) == {"expirationDate": refusal("2 units are", 100)}
    on_its_start = assert_problem(expire_on(api, policy, 120), 400)  # it would cover no day
    assert field_errors(on_its_start) == {"expirationDate": refusal("1 unit is", 120)}
    policy.refresh_from_db()
    assert policy.expiration_date == today() + 265 * DAY
    assert Event.objects.count() == announced  # nothing changed, nothing announced

    # Removed on its first day, the period never covers a day: it no longer holds the end.
    assert change(api, later, policy, 1, policyRemovedDate=days(120)).status_code == 200
    moved = expire_on(api, policy, 101)
    assert moved.status_code == 200, moved.content
    assert [verified(api, late, days(n)) for n in (99, 100, 101)] == [False, True, False]


def test_an_expiration_moved_later_or_past_every_start_is_accepted(api, carrier, policy):
    unit = VehicleFactory(client=carrier)
    assert assign(api, unit, policy, policyAddedDate=days(100)).status_code == 201
    assert expire_on(api, policy, 101).status_code == 200
    assert expire_on(api, policy, 300).status_code == 200


def test_a_drivers_period_holds_the_end_too(api, carrier):
    policy = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="OA"))
    driver = DriverFactory(client=carrier)
    body = {"driverId": driver.id, "policyId": policy.id, "policyAddedDate": days(30)}
    assert api.post("/v1/drivers/coverages", body, format="json").status_code == 201

    refused = assert_problem(expire_on(api, policy, 20), 400)
    assert field_errors(refused) == {"expirationDate": refusal("1 driver is", 30)}


def test_the_admin_form_obeys_the_same_rule(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    policy = PolicyFactory(client=carrier)
    VehicleCoverageFactory(
        vehicle=VehicleFactory(client=carrier),
        policy=policy,
        policy_added_date=today() + 100 * DAY,
    )
    response = admin_change(staff_client, policy, expiration_date=days(90))
    assert response.status_code == 200  # the form again, with the service's message
    errors = response.context["adminform"].form.errors
    assert errors.get("expiration_date") == [refusal("1 unit is", 100)]
    policy.refresh_from_db()
    assert policy.expiration_date == today() + 265 * DAY


def detail(api, unit) -> dict:
    response = api.get(f"/v1/vehicles/{unit.id}")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_period_removed_after_the_moved_end_covers_only_inside_the_term(api, carrier, policy):
    # Partly outside: removed after the end the policy is given later. Verification and the
    # vehicle detail agree that the unit is covered through the policy's last day only.
    unit = VehicleFactory(client=carrier)
    assert assign(api, unit, policy, policyAddedDate=days(-50)).status_code == 201
    assert change(api, unit, policy, 1, policyRemovedDate=days(30)).status_code == 200
    moved = expire_on(api, policy, -10)
    assert moved.status_code == 200, moved.content

    assert [verified(api, unit, days(n)) for n in (-11, -10, 0, 29)] == [True, False, False, False]
    shown = detail(api, unit)
    [period] = shown["policyAssociations"]
    assert (shown["covered"], shown["coverageTypes"], period["covered"]) == (False, [], False)
    assert period["policyStatus"] == "EXPIRED"


def test_a_period_starting_after_the_end_never_covers_a_day(api, carrier):
    # Wholly outside, as rows written before the rule may be: never counted, by any reader.
    ended = PolicyFactory(
        client=carrier, effective_date=today() - 200 * DAY, expiration_date=today() - 30 * DAY
    )
    unit = VehicleFactory(client=carrier)
    VehicleCoverageFactory(vehicle=unit, policy=ended, policy_added_date=today() - 20 * DAY)

    assert [verified(api, unit, days(n)) for n in (-31, -30, -20, 0)] == [False] * 4
    shown = detail(api, unit)
    assert (shown["covered"], shown["policyAssociations"][0]["covered"]) == (False, False)
