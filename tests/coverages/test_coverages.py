"""Coverages (the spec's "coverage assignments"): spec section 3, contract section 10."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.coverages.models import CoverageEvent, VehicleCoverage
from apps.masterdata.models import CoverageType
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import ClientFactory, DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


@pytest.fixture
def policy(carrier):
    return PolicyFactory(client=carrier)


@pytest.fixture
def unit(carrier):
    return VehicleFactory(client=carrier)


def assign(api, vehicle, policy, **extra):
    return api.post(
        "/v1/vehicles/coverages",
        {"vehicleId": vehicle.id, "policyId": policy.id, **extra},
        format="json",
    )


def change(api, vehicle, policy, status, **extra):
    return api.put(
        "/v1/vehicles/coverages",
        {"vehicleId": vehicle.id, "policyId": policy.id, "coverageStatus": status, **extra},
        format="json",
    )


def test_schedule_on_active_policy(api, unit, policy):
    added = (today() - 5 * DAY).isoformat()
    response = assign(api, unit, policy, policyAddedDate=added)
    assert response.status_code == 201, response.content
    assert response.json() == {
        "id": response.json()["id"],
        "vehicleId": unit.id,
        "policyId": policy.id,
        "coverageStatus": 4,
        "coverageStatusName": "Sponsored scheduled unit",
        "policyAddedDate": added,
        "policyRemovedDate": None,
    }
    assert CoverageEvent.objects.filter(vehicle_coverage_id=response.json()["id"]).count() == 1


def test_a_unit_scheduled_points_location_at_the_vehicle(api, unit, policy):
    # The period has no URL of its own: the vehicle's detail shows it.
    response = assign(api, unit, policy, policyAddedDate=today().isoformat())
    assert response.status_code == 201, response.content
    assert response["Location"].endswith(f"/v1/vehicles/{unit.id}")
    assert api.get(response["Location"]).json()["id"] == unit.id


@pytest.mark.parametrize("added", [None, "outside-before", "on-expiration"])
def test_active_policy_needs_an_added_date_inside_the_term(api, unit, policy, added):
    extra = {}
    if added == "outside-before":
        extra["policyAddedDate"] = (policy.effective_date - DAY).isoformat()
    elif added == "on-expiration":
        extra["policyAddedDate"] = policy.expiration_date.isoformat()
    errors = field_errors(assert_problem(assign(api, unit, policy, **extra), 400))
    assert "policyAddedDate" in errors


def test_an_added_date_outside_the_term_names_the_bound_it_crosses(api, carrier, unit, policy):
    """Before the start, the message names the start; on or after the end, the end; each
    with the whole term."""
    term = f"{policy.effective_date} to {policy.ends_on}"
    before = assign(api, unit, policy, policyAddedDate=str(policy.effective_date - DAY))
    assert field_errors(assert_problem(before, 400))["policyAddedDate"] == (
        f"Must be inside the policy term ({term}): the policy starts on {policy.effective_date}."
    )
    after = assign(api, unit, policy, policyAddedDate=str(policy.expiration_date))
    assert field_errors(assert_problem(after, 400))["policyAddedDate"] == (
        f"Must be inside the policy term ({term}): the policy ends on {policy.ends_on}."
    )
    # Drivers' periods share the rule, and a rescheduling its message.
    oa = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="OA"))
    body = {"driverId": DriverFactory(client=carrier).id, "policyId": oa.id}
    early = {**body, "policyAddedDate": str(oa.effective_date - DAY)}
    refused = api.post("/v1/drivers/coverages", early, format="json")
    assert field_errors(assert_problem(refused, 400))["policyAddedDate"] == (
        f"Must be inside the policy term ({oa.effective_date} to {oa.ends_on}): the policy "
        f"starts on {oa.effective_date}."
    )
    assert assign(api, unit, policy, policyAddedDate=str(today())).status_code == 201
    moved = change(api, unit, policy, 4, policyAddedDate=str(policy.effective_date - DAY))
    assert "the policy starts on" in field_errors(assert_problem(moved, 400))["policyAddedDate"]


def test_future_policy_derives_the_date(api, carrier, unit):
    future = PolicyFactory(client=carrier, effective_date=today() + 30 * DAY)
    response = assign(api, unit, future, policyAddedDate=today().isoformat())
    assert response.status_code == 201
    assert response.json()["policyAddedDate"] == future.effective_date.isoformat()


@pytest.mark.parametrize("state", ["expired", "cancelled"])
def test_expired_or_cancelled_policy_is_400(api, carrier, unit, state):
    if state == "expired":
        policy = PolicyFactory(
            client=carrier, effective_date=today() - 400 * DAY, expiration_date=today() - 35 * DAY
        )
    else:
        policy = PolicyFactory(client=carrier, cancellation_date=today() - DAY)
    assert "policyId" in field_errors(
        assert_problem(assign(api, unit, policy, policyAddedDate=today().isoformat()), 400)
    )


def test_policy_line_must_schedule_units(api, carrier, unit):
    gl = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="GL"))
    assert_problem(assign(api, unit, gl, policyAddedDate=today().isoformat()), 400)


def test_vehicle_and_policy_must_share_a_client(api, agency, unit):
    elsewhere = PolicyFactory(client=ClientFactory(agency=agency))
    assert_problem(assign(api, unit, elsewhere, policyAddedDate=today().isoformat()), 400)


def test_hidden_references_are_400(api, unit, policy, other_agency):
    rival = ClientFactory(agency=other_agency)
    hidden_policy, hidden_unit = PolicyFactory(client=rival), VehicleFactory(client=rival)
    date = today().isoformat()
    assert "policyId" in field_errors(
        assert_problem(assign(api, unit, hidden_policy, policyAddedDate=date), 400)
    )
    assert "vehicleId" in field_errors(
        assert_problem(assign(api, hidden_unit, policy, policyAddedDate=date), 400)
    )


def test_duplicate_is_409_and_rescheduling_after_removal_opens_a_new_period(api, unit, policy):
    date = (today() - 10 * DAY).isoformat()
    assert assign(api, unit, policy, policyAddedDate=date).status_code == 201
    assert_problem(assign(api, unit, policy, policyAddedDate=date), 409)
    removed = change(api, unit, policy, 1).json()
    assert removed["coverageStatus"] == 1 and removed["policyRemovedDate"] == today().isoformat()
    again = assign(api, unit, policy, policyAddedDate=today().isoformat())
    assert again.status_code == 201
    assert VehicleCoverage.objects.filter(vehicle=unit, policy=policy).count() == 2


def test_decline_and_remove_take_an_effective_date(api, unit, policy):
    assign(api, unit, policy, policyAddedDate=(today() - 10 * DAY).isoformat())
    declined = change(api, unit, policy, 2, policyRemovedDate=(today() - 2 * DAY).isoformat())
    assert declined.status_code == 200
    assert declined.json()["coverageStatusName"] == "Coverage declined"
    assert declined.json()["policyRemovedDate"] == (today() - 2 * DAY).isoformat()
    before_added = (today() - 20 * DAY).isoformat()
    assert_problem(change(api, unit, policy, 1, policyRemovedDate=before_added), 400)


def test_status_4_moves_the_added_date(api, unit, policy):
    assign(api, unit, policy, policyAddedDate=(today() - 10 * DAY).isoformat())
    moved = change(api, unit, policy, 4, policyAddedDate=(today() - 3 * DAY).isoformat())
    assert moved.json()["policyAddedDate"] == (today() - 3 * DAY).isoformat()
    assert_problem(change(api, unit, policy, 4), 400)
    events = CoverageEvent.objects.filter(vehicle_coverage__vehicle=unit).order_by("id")
    assert [e.policy_added_date for e in events] == [today() - 10 * DAY, today() - 3 * DAY]


@pytest.mark.parametrize("status", [0, 3, 5, 7, 99])
def test_other_status_values_are_400(api, unit, policy, status):
    assign(api, unit, policy, policyAddedDate=today().isoformat())
    assert "coverageStatus" in field_errors(assert_problem(change(api, unit, policy, status), 400))


def test_put_without_any_period_is_404(api, unit, policy):
    assert_problem(change(api, unit, policy, 1), 404)


def test_put_on_other_agency_pair_is_400_on_the_unit(api, other_api, unit, policy):
    # Named change: was 404; the references are named as POST names them (contract 4).
    assign(api, unit, policy, policyAddedDate=today().isoformat())
    refused = assert_problem(change(other_api, unit, policy, 1), 400)
    assert field_errors(refused) == {"vehicleId": "No vehicle with this id."}


def test_vehicle_coverage_needs_change_vehicle(viewer_api, unit, policy):
    assert_problem(assign(viewer_api, unit, policy, policyAddedDate=today().isoformat()), 403)
    assert_problem(change(viewer_api, unit, policy, 1), 403)


def test_bad_bodies_are_400(api):
    assert_problem(api.post("/v1/vehicles/coverages", {}, format="json"), 400)
    assert_problem(
        api.post("/v1/vehicles/coverages", {"vehicleId": "x", "policyId": 1}, format="json"), 400
    )


# --- drivers -------------------------------------------------------------------------------


@pytest.fixture
def oa_policy(carrier):
    return PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="OA"))


def test_driver_schedule_change_and_remove(api, carrier, oa_policy):
    driver = DriverFactory(client=carrier)
    body = {"driverId": driver.id, "policyId": oa_policy.id}
    created = api.post(
        "/v1/drivers/coverages", {**body, "policyAddedDate": today().isoformat()}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["coverageStatus"] == 7
    assert_problem(
        api.post(
            "/v1/drivers/coverages", {**body, "policyAddedDate": today().isoformat()}, format="json"
        ),
        409,
    )
    assert_problem(
        api.put("/v1/drivers/coverages", {**body, "coverageStatus": 4}, format="json"), 400
    )
    removed = api.put("/v1/drivers/coverages", {**body, "coverageStatus": 1}, format="json")
    assert removed.status_code == 200 and removed.json()["coverageStatus"] == 1
    detail = api.get(f"/v1/drivers/{driver.id}").json()
    assert detail["coverages"][0]["coverageStatus"] == 1


def test_a_driver_scheduled_points_location_at_the_driver(api, carrier, oa_policy):
    driver = DriverFactory(client=carrier)
    body = {"driverId": driver.id, "policyId": oa_policy.id, "policyAddedDate": today().isoformat()}
    response = api.post("/v1/drivers/coverages", body, format="json")
    assert response.status_code == 201, response.content
    assert response["Location"].endswith(f"/v1/drivers/{driver.id}")
    shown = api.get(response["Location"]).json()
    assert [c["assignmentId"] for c in shown["coverages"]] == [response.json()["id"]]


def test_driver_needs_an_oa_or_dd_policy(api, carrier, policy):
    driver = DriverFactory(client=carrier)
    response = api.post(
        "/v1/drivers/coverages",
        {"driverId": driver.id, "policyId": policy.id, "policyAddedDate": today().isoformat()},
        format="json",
    )
    assert "policyId" in field_errors(assert_problem(response, 400))


def test_driver_coverage_needs_change_driver(viewer_api, carrier, oa_policy):
    driver = DriverFactory(client=carrier)
    assert_problem(
        viewer_api.post(
            "/v1/drivers/coverages",
            {"driverId": driver.id, "policyId": oa_policy.id, "policyAddedDate": str(today())},
            format="json",
        ),
        403,
    )


def test_driver_detail_shows_in_force_oa_coverage(api, carrier, oa_policy):
    driver = DriverFactory(client=carrier)
    api.post(
        "/v1/drivers/coverages",
        {"driverId": driver.id, "policyId": oa_policy.id, "policyAddedDate": str(today())},
        format="json",
    )
    detail = api.get(f"/v1/drivers/{driver.id}").json()
    assert detail["verified"] is True
    assert detail["coverages"][0]["coverageType"] == "OA"


@pytest.fixture
def cancelling(carrier):
    """An active policy cancelled in ten days, its term running on past that."""
    return PolicyFactory(client=carrier, cancellation_date=today() + 10 * DAY)


@pytest.mark.parametrize("after", [0, 1, 5])
def test_a_unit_added_on_or_after_the_cancellation_is_400(api, unit, cancelling, after):
    added = cancelling.cancellation_date + after * DAY
    assert added < cancelling.expiration_date  # inside the term all the same
    response = assign(api, unit, cancelling, policyAddedDate=added.isoformat())
    assert "policyAddedDate" in field_errors(assert_problem(response, 400))
    assert not VehicleCoverage.objects.exists()
    # a day it covers is still a day to schedule from
    last = (cancelling.cancellation_date - DAY).isoformat()
    assert assign(api, unit, cancelling, policyAddedDate=last).status_code == 201


def test_a_unit_rescheduled_onto_the_cancellation_is_400(api, unit, cancelling):
    assign(api, unit, cancelling, policyAddedDate=today().isoformat())
    moved = change(
        api, unit, cancelling, 4, policyAddedDate=cancelling.cancellation_date.isoformat()
    )
    assert "policyAddedDate" in field_errors(assert_problem(moved, 400))
    assert VehicleCoverage.objects.get().policy_added_date == today()


def test_a_driver_added_or_rescheduled_on_the_cancellation_is_400(api, carrier):
    oa = PolicyFactory(
        client=carrier,
        coverage_type=CoverageType.objects.get(code="OA"),
        cancellation_date=today() + 10 * DAY,
    )
    body = {"driverId": DriverFactory(client=carrier).id, "policyId": oa.id}
    on_cancellation = {**body, "policyAddedDate": oa.cancellation_date.isoformat()}
    refused = api.post("/v1/drivers/coverages", on_cancellation, format="json")
    assert "policyAddedDate" in field_errors(assert_problem(refused, 400))
    created = api.post(
        "/v1/drivers/coverages", {**body, "policyAddedDate": today().isoformat()}, format="json"
    )
    assert created.status_code == 201, created.content
    moved = api.put(
        "/v1/drivers/coverages", {**on_cancellation, "coverageStatus": 7}, format="json"
    )
    assert "policyAddedDate" in field_errors(assert_problem(moved, 400))
