"""A unit's (or driver's) periods on a policy follow one another, and an ended one stays ended:
what a PUT addresses is then always the period an integrator means, and no write makes a unit
covered again for days already answered as uncovered (contract section 10)."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.coverages.models import CoverageEvent
from apps.events.models import Event
from apps.masterdata.models import CoverageType
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.coverages.test_coverages import assign, change
from tests.factories import DriverFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


@pytest.fixture
def policy(carrier):
    return PolicyFactory(client=carrier)  # in force from 100 days ago, for a year


@pytest.fixture
def unit(carrier):
    return VehicleFactory(client=carrier)


def days(n: int) -> str:
    return (today() + n * DAY).isoformat()


def verified(api, unit, on: str) -> bool:
    response = api.get(f"/v1/coverages/vehicles?vin={unit.serial_number}&asOf={on}")
    assert response.status_code == 200, response.content
    return response.json()["results"][0]["verified"]


def test_a_later_period_cannot_start_before_an_earlier_one_ended(api, unit, policy):
    first = assign(api, unit, policy, policyAddedDate=days(-90)).json()["id"]
    assert change(api, unit, policy, 1, policyRemovedDate=days(-60)).json()["id"] == first

    refused = assert_problem(assign(api, unit, policy, policyAddedDate=days(-70)), 400)
    assert field_errors(refused) == {
        "policyAddedDate": f"Cannot precede the end of an earlier period on this policy "
        f"({days(-60)})."
    }
    second = assign(api, unit, policy, policyAddedDate=days(-30))
    assert second.status_code == 201, second.content
    second = second.json()["id"]

    # Moving the open period's added date before the earlier end is refused the same way:
    # the open period would no longer be the pair's latest, and the next removal would end
    # the old one instead (the unit covered for good).
    refused = assert_problem(change(api, unit, policy, 4, policyAddedDate=days(-95)), 400)
    assert "policyAddedDate" in field_errors(refused)
    moved = change(api, unit, policy, 4, policyAddedDate=days(-60))
    assert moved.status_code == 200 and moved.json()["id"] == second

    removed = change(api, unit, policy, 1, policyRemovedDate=days(-10))
    assert removed.status_code == 200
    assert removed.json()["id"] == second
    assert removed.json()["policyRemovedDate"] == days(-10)
    assert verified(api, unit, days(-20)) and not verified(api, unit, days(-5))
    assert not verified(api, unit, days(0))
    listed = api.get(f"/v1/policies/{policy.id}/vehicles").json()["results"]
    assert [(u["assignmentId"], u["coverageStatus"]) for u in listed] == [(second, 1)]


def test_a_removal_sent_again_changes_nothing(api, unit, policy):
    assign(api, unit, policy, policyAddedDate=days(-90))
    first = change(api, unit, policy, 1, policyRemovedDate=days(-60)).json()
    logged, announced = CoverageEvent.objects.count(), Event.objects.count()

    for again in ({}, {"policyRemovedDate": days(-60)}):
        response = change(api, unit, policy, 1, **again)
        assert response.status_code == 200, response.content
        assert response.json() == first
    assert (CoverageEvent.objects.count(), Event.objects.count()) == (logged, announced)
    assert not verified(api, unit, days(-30)) and not verified(api, unit, days(-1))


@pytest.mark.parametrize("subject", ["vehicle", "driver"])
def test_a_reschedule_to_the_same_added_date_changes_nothing(api, carrier, subject):
    """docs/webhooks.md: a write that changes nothing answers as usual and announces nothing:
    no saved change (history), no logged change, no second `….rescheduled`."""
    if subject == "vehicle":
        policy, target, status = PolicyFactory(client=carrier), VehicleFactory(client=carrier), 4
    else:
        oa = CoverageType.objects.get(code="OA")
        policy, status = PolicyFactory(client=carrier, coverage_type=oa), 7
        target = DriverFactory(client=carrier)
    url, pair = f"/v1/{subject}s/coverages", {f"{subject}Id": target.id, "policyId": policy.id}

    def put(added: str):
        body = {**pair, "coverageStatus": status, "policyAddedDate": added}
        response = api.put(url, body, format="json")
        assert response.status_code == 200, response.content
        return response.json()

    created = api.post(url, {**pair, "policyAddedDate": days(-90)}, format="json")
    assert created.status_code == 201, created.content
    moved = put(days(-60))
    coverage_model = CoverageEvent._meta.get_field(f"{subject}_coverage").related_model
    before = (
        CoverageEvent.objects.count(),
        list(Event.objects.values_list("type", flat=True)),
        coverage_model.history.count(),
    )
    assert before[1].count(f"{subject}.rescheduled") == 1

    assert put(days(-60)) == moved
    assert (
        CoverageEvent.objects.count(),
        list(Event.objects.values_list("type", flat=True)),
        coverage_model.history.count(),
    ) == before


@pytest.mark.parametrize(
    "status, removed",
    [
        (1, -30),  # later: covered again for 30 days already answered
        (2, None),  # the other ending status
        (2, -60),
    ],
)
def test_an_end_that_has_come_does_not_move_later_or_change_status(
    api, unit, policy, status, removed
):
    assign(api, unit, policy, policyAddedDate=days(-90))
    change(api, unit, policy, 1, policyRemovedDate=days(-60))
    extra = {} if removed is None else {"policyRemovedDate": days(removed)}

    refused = assert_problem(change(api, unit, policy, status, **extra), 400)
    assert field_errors(refused) == {
        "coverageStatus": f"The unit was removed or declined on {days(-60)}; an end that has "
        "come may only move earlier. Schedule it again with POST."
    }
    assert not verified(api, unit, days(-45))
    listed = api.get(f"/v1/policies/{policy.id}/vehicles").json()["results"]
    assert [(u["coverageStatus"], u["policyRemovedDate"]) for u in listed] == [(1, days(-60))]


def test_an_end_may_move_earlier_and_one_still_ahead_either_way(api, unit, policy):
    assign(api, unit, policy, policyAddedDate=days(-90))
    change(api, unit, policy, 1, policyRemovedDate=days(-60))
    earlier = change(api, unit, policy, 1, policyRemovedDate=days(-70))
    assert earlier.status_code == 200 and earlier.json()["policyRemovedDate"] == days(-70)
    assert not verified(api, unit, days(-65))
    assert_problem(change(api, unit, policy, 1, policyRemovedDate=days(-91)), 400)

    ahead = VehicleFactory(client=unit.client)
    assign(api, ahead, policy, policyAddedDate=days(-90))
    change(api, ahead, policy, 2, policyRemovedDate=days(10))
    later = change(api, ahead, policy, 2, policyRemovedDate=days(20))
    assert later.status_code == 200 and later.json()["policyRemovedDate"] == days(20)
    assert verified(api, ahead, days(15)) and not verified(api, ahead, days(20))
    # An end still ahead may change status, and a removal without a date is today's.
    assert change(api, ahead, policy, 1, policyRemovedDate=days(20)).json()["coverageStatus"] == 1
    now = change(api, ahead, policy, 1)
    assert now.status_code == 200 and now.json()["policyRemovedDate"] == days(0)
    assert not verified(api, ahead, days(0)) and verified(api, ahead, days(-1))
    assert change(api, ahead, policy, 1).json() == now.json()  # sent again: unchanged


def test_drivers_follow_the_same_rules(api, carrier):
    policy = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="OA"))
    driver = DriverFactory(client=carrier)
    pair = {"driverId": driver.id, "policyId": policy.id}

    def put(status, **extra):
        return api.put(
            "/v1/drivers/coverages", {**pair, "coverageStatus": status, **extra}, format="json"
        )

    def post(added):
        return api.post("/v1/drivers/coverages", {**pair, "policyAddedDate": added}, format="json")

    post(days(-90))
    put(1, policyRemovedDate=days(-60))
    assert_problem(post(days(-70)), 400)
    second = post(days(-30)).json()["id"]
    assert_problem(put(7, policyAddedDate=days(-95)), 400)
    removed = put(1, policyRemovedDate=days(-10))
    assert removed.status_code == 200 and removed.json()["id"] == second
    assert_problem(put(1, policyRemovedDate=days(-5)), 400)
    assert put(1).json() == removed.json()  # sent again: unchanged


def test_another_agencys_pair_is_400_and_a_viewer_403(api, other_api, viewer_api, unit, policy):
    # Named change: was 404; the references are named as POST names them (contract 4).
    assign(api, unit, policy, policyAddedDate=days(-90))
    change(api, unit, policy, 1, policyRemovedDate=days(-60))
    assert_problem(change(other_api, unit, policy, 1), 400)
    assert_problem(change(viewer_api, unit, policy, 1), 403)


def test_a_unit_still_scheduled_is_a_409_whatever_the_date(api, unit, policy):
    assign(api, unit, policy, policyAddedDate=days(-90))
    change(api, unit, policy, 1, policyRemovedDate=days(-60))
    assign(api, unit, policy, policyAddedDate=days(-30))
    # Before the first period's end, too: still scheduled is the answer.
    assert_problem(assign(api, unit, policy, policyAddedDate=days(-80)), 409)


def test_a_deleted_policys_periods_are_not_written(api, unit, policy):
    assign(api, unit, policy, policyAddedDate=days(-90))
    assert api.put(f"/v1/policies/{policy.id}", {"deleted": True}, format="json").status_code == 200
    logged, announced = CoverageEvent.objects.count(), Event.objects.count()

    refused = assert_problem(change(api, unit, policy, 1, policyRemovedDate=days(-10)), 400)
    assert field_errors(refused) == {"policyId": "No policy with this id."}
    assert (CoverageEvent.objects.count(), Event.objects.count()) == (logged, announced)
    assert (
        api.put(f"/v1/policies/{policy.id}", {"deleted": False}, format="json").status_code == 200
    )
    assert change(api, unit, policy, 1, policyRemovedDate=days(-10)).status_code == 200


def test_a_future_policys_unit_scheduled_again_starts_where_it_was_removed(api, unit, carrier):
    future = PolicyFactory(client=carrier, effective_date=today() + 30 * DAY)
    first = assign(api, unit, future)
    assert first.json()["policyAddedDate"] == days(30)
    change(api, unit, future, 1, policyRemovedDate=days(40))

    again = assign(api, unit, future)
    assert again.status_code == 201, again.content
    assert (again.json()["policyAddedDate"], again.json()["policyRemovedDate"]) == (days(40), None)
    # The first period covers days 30 to 39, the new one from day 40: no gap, no overlap.
    assert [verified(api, unit, days(n)) for n in (29, 35, 40, 50)] == [False, True, True, True]


@pytest.mark.parametrize("status", [1, 2])
def test_a_future_policys_unit_removed_without_a_date_is_removed_on_its_first_day(
    api, unit, carrier, status
):
    # "policyRemovedDate defaults to today": today precedes the period's first day, and the
    # 400 named a field the caller never sent. The period then never covers a day.
    future = PolicyFactory(client=carrier, effective_date=today() + 30 * DAY)
    assign(api, unit, future)

    removed = change(api, unit, future, status)
    assert removed.status_code == 200, removed.content
    assert removed.json()["policyRemovedDate"] == days(30)
    assert [verified(api, unit, days(n)) for n in (0, 30, 31, 100)] == [False] * 4
    # Sent again, it changes nothing; scheduled again, the unit starts on that day.
    assert change(api, unit, future, status).json() == removed.json()
    again = assign(api, unit, future)
    assert again.json()["policyAddedDate"] == days(30)
    assert verified(api, unit, days(30))


def test_a_future_policys_driver_removed_without_a_date_is_removed_on_its_first_day(api, carrier):
    future = PolicyFactory(
        client=carrier,
        effective_date=today() + 30 * DAY,
        coverage_type=CoverageType.objects.get(code="OA"),
    )
    driver = DriverFactory(client=carrier)
    body = {"driverId": driver.id, "policyId": future.id}
    assert api.post("/v1/drivers/coverages", body, format="json").status_code == 201
    removed = api.put("/v1/drivers/coverages", {**body, "coverageStatus": 1}, format="json")
    assert removed.status_code == 200, removed.content
    assert removed.json()["policyRemovedDate"] == days(30)


def test_a_pair_written_before_the_rule_still_ends_its_open_period(api, unit, policy):
    # Periods out of order, as the API let them be written before (an open period moved
    # before an ended one): the PUT still addresses the open one.
    VehicleCoverageFactory(
        vehicle=unit,
        policy=policy,
        policy_added_date=today() - 90 * DAY,
        policy_removed_date=today() - 60 * DAY,
        coverage_status=1,
    )
    open_period = VehicleCoverageFactory(
        vehicle=unit, policy=policy, policy_added_date=today() - 95 * DAY
    )
    removed = change(api, unit, policy, 1, policyRemovedDate=days(-10))
    assert removed.status_code == 200 and removed.json()["id"] == open_period.id
    assert not verified(api, unit, days(0))


def test_a_deleted_clients_unit_or_driver_cannot_be_scheduled(api, carrier, policy, unit):
    # Its policies and units are gone with it, as a new policy or unit on it is refused.
    driver = DriverFactory(client=carrier)
    oa = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="OA"))
    deleted = api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json")
    assert deleted.status_code == 200, deleted.content
    refused = assert_problem(assign(api, unit, policy, policyAddedDate=days(-1)), 400)
    assert field_errors(refused) == {"vehicleId": "No vehicle with this id."}
    body = {"driverId": driver.id, "policyId": oa.id, "policyAddedDate": days(-1)}
    refused = assert_problem(api.post("/v1/drivers/coverages", body, format="json"), 400)
    assert field_errors(refused) == {"driverId": "No driver with this id."}


@pytest.mark.parametrize("gone", ["vehicle", "client"])
@pytest.mark.parametrize(
    "status, dates",
    [
        (4, {"policyAddedDate": -80}),
        (1, {}),
        (1, {"policyRemovedDate": -10}),
        (2, {"policyRemovedDate": -10}),
    ],
)
def test_a_deleted_unit_or_a_deleted_clients_unit_keeps_its_periods(
    api, carrier, unit, policy, gone, status, dates
):
    dates = {field: days(n) for field, n in dates.items()}
    # A PUT answers what scheduling it answers (the unit is gone for the writes that name it):
    # nothing moves, nothing is announced, and restoring the record finds the period as it was.
    scheduled = assign(api, unit, policy, policyAddedDate=days(-90)).json()
    record = f"/v1/clients/{carrier.id}" if gone == "client" else f"/v1/vehicles/{unit.id}"
    assert api.put(record, {"deleted": True}, format="json").status_code == 200
    logged, announced = CoverageEvent.objects.count(), Event.objects.count()

    refused = assert_problem(change(api, unit, policy, status, **dates), 400)
    assert field_errors(refused) == {"vehicleId": "No vehicle with this id."}
    posted = assert_problem(assign(api, unit, policy, policyAddedDate=days(-1)), 400)
    assert posted == refused
    assert (CoverageEvent.objects.count(), Event.objects.count()) == (logged, announced)

    assert api.put(record, {"deleted": False}, format="json").status_code == 200
    periods = api.get(f"/v1/vehicles/{unit.id}").json()["policyAssociations"]
    assert [(p["policyAddedDate"], p["policyRemovedDate"]) for p in periods] == [
        (scheduled["policyAddedDate"], None)
    ]
    assert change(api, unit, policy, status, **dates).status_code == 200


@pytest.mark.parametrize(
    "status, dates",
    [
        (7, {"policyAddedDate": -80}),
        (1, {}),
        (2, {"policyRemovedDate": -10}),
    ],
)
def test_a_deleted_clients_driver_keeps_its_periods(api, carrier, status, dates):
    dates = {field: days(n) for field, n in dates.items()}
    oa = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="OA"))
    driver = DriverFactory(client=carrier)
    body = {"driverId": driver.id, "policyId": oa.id}
    scheduled = api.post(
        "/v1/drivers/coverages", {**body, "policyAddedDate": days(-90)}, format="json"
    ).json()
    client = f"/v1/clients/{carrier.id}"
    assert api.put(client, {"deleted": True}, format="json").status_code == 200
    logged, announced = CoverageEvent.objects.count(), Event.objects.count()

    put = {**body, "coverageStatus": status, **dates}
    refused = assert_problem(api.put("/v1/drivers/coverages", put, format="json"), 400)
    assert field_errors(refused) == {"driverId": "No driver with this id."}
    posted = api.post("/v1/drivers/coverages", {**body, "policyAddedDate": days(-1)}, format="json")
    assert assert_problem(posted, 400) == refused
    assert (CoverageEvent.objects.count(), Event.objects.count()) == (logged, announced)

    assert api.put(client, {"deleted": False}, format="json").status_code == 200
    periods = api.get(f"/v1/drivers/{driver.id}").json()["coverages"]
    assert [(p["policyAddedDate"], p["policyRemovedDate"]) for p in periods] == [
        (scheduled["policyAddedDate"], None)
    ]
    assert api.put("/v1/drivers/coverages", put, format="json").status_code == 200
