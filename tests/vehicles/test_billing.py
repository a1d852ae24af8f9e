"""The vehicle detail's billing: the unit's annual premium on each policy that covers it today.

docs/api_intro.md: "per policy the unit is scheduled on". The premiums followed the period's
status code alone: a unit whose removal was dated ahead (still covered, `covered` true) showed
no premium, and a unit of a policy cancelled or deleted (covered by nothing) still showed one.
They follow the detail's own `covered` rule now (`Coverage.covered_on`).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from apps.core.dates import today
from apps.policies.models import PolicyRate
from tests.factories import PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


@pytest.fixture
def unit(carrier):
    return VehicleFactory(client=carrier, stated_value=Decimal("100000.00"))


@pytest.fixture
def policy(carrier, unit):
    policy = PolicyFactory(client=carrier, policy_number="AL-BILL")
    PolicyRate.objects.create(policy=policy, unit_type=unit.unit_type, annual_rate=6000)
    return policy


@pytest.fixture
def scheduled(api, unit, policy):
    body = {"vehicleId": unit.id, "policyId": policy.id, "policyAddedDate": str(today() - DAY)}
    response = api.post("/v1/vehicles/coverages", body, format="json")
    assert response.status_code == 201, response.content
    return unit, policy


def put(api, path, body):
    response = api.put(path, body, format="json")
    assert response.status_code == 200, response.content


def premium_of(policy) -> dict:
    return {
        "policyId": policy.id,
        "policyNumber": "AL-BILL",
        "coverageType": "AL",
        "annualPremium": "6000.00",
    }


def test_a_unit_whose_removal_is_still_ahead_is_billed(api, scheduled):
    unit, policy = scheduled
    removal = {"vehicleId": unit.id, "policyId": policy.id, "coverageStatus": 1}
    put(api, "/v1/vehicles/coverages", {**removal, "policyRemovedDate": str(today() + 10 * DAY)})
    body = api.get(f"/v1/vehicles/{unit.id}").json()
    assert body["covered"] is True and body["coverageTypes"] == ["AL"]
    assert body["billing"]["premiums"] == [premium_of(policy)]


def test_a_unit_removed_as_of_today_is_not_billed(api, scheduled):
    unit, policy = scheduled
    put(
        api,
        "/v1/vehicles/coverages",
        {"vehicleId": unit.id, "policyId": policy.id, "coverageStatus": 1},
    )
    body = api.get(f"/v1/vehicles/{unit.id}").json()
    assert body["covered"] is False
    assert body["billing"]["premiums"] == []


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda: {"cancellationDate": str(today())}, id="cancelled-today"),
        pytest.param(lambda: {"deleted": True}, id="deleted"),
    ],
)
def test_a_unit_of_a_policy_no_longer_in_force_is_not_billed(api, scheduled, change):
    unit, policy = scheduled
    assert api.get(f"/v1/vehicles/{unit.id}").json()["billing"]["premiums"] == [premium_of(policy)]
    put(api, f"/v1/policies/{policy.id}", change())
    body = api.get(f"/v1/vehicles/{unit.id}").json()
    assert body["covered"] is False and body["coverageTypes"] == []
    assert body["billing"]["premiums"] == []


def test_a_unit_of_a_future_policy_is_not_billed_yet(api, carrier, unit):
    future = PolicyFactory(client=carrier, effective_date=today() + 30 * DAY)
    PolicyRate.objects.create(policy=future, unit_type=unit.unit_type, annual_rate=6000)
    body = {"vehicleId": unit.id, "policyId": future.id}
    assert api.post("/v1/vehicles/coverages", body, format="json").status_code == 201
    detail = api.get(f"/v1/vehicles/{unit.id}").json()
    assert detail["covered"] is False
    assert detail["billing"]["premiums"] == []


def test_a_deleted_unit_is_not_billed(api, scheduled):
    unit, _policy = scheduled
    put(api, f"/v1/vehicles/{unit.id}", {"deleted": True})
    body = api.get(f"/v1/vehicles/{unit.id}").json()
    assert body["covered"] is False
    assert body["billing"]["premiums"] == []
