"""Money is a decimal string (contract section 6): a JSON number where money goes is refused,
saying so. `PUT /v1/vehicles/6 {"statedValue": 145000}` answered "statedValue: A valid number
is required.", which reads as if 145000 were not one; a requirement profile's `minimumLimit`
took the number (its documentation and every example send a string)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import assert_problem
from tests.factories import PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db


def errors(response) -> dict[str, str]:
    return {e["field"]: e["message"] for e in assert_problem(response, 400)["errors"]}


@pytest.mark.parametrize(
    ("sent", "example"),
    [(145000, "145000.00"), (145000.5, "145000.50"), (0.001, "125000.00"), (True, "125000.00")],
)
def test_a_number_for_a_vehicles_stated_value_says_to_send_a_string(api, carrier, sent, example):
    vehicle = VehicleFactory(client=carrier)
    response = api.put(f"/v1/vehicles/{vehicle.id}", {"statedValue": sent}, format="json")
    assert errors(response) == {"statedValue": f'Send money as a decimal string, e.g. "{example}".'}
    vehicle.refresh_from_db()
    assert vehicle.stated_value == Decimal("100000.00")


def test_a_number_for_a_policy_limit_or_premium_says_to_send_a_string(api, carrier):
    policy = PolicyFactory(client=carrier, premium=Decimal("10.00"))
    body = {"premium": 2500, "limits": [{"name": "Aggregate", "amount": 1000000}]}
    assert errors(api.put(f"/v1/policies/{policy.id}", body, format="json")) == {
        "premium": 'Send money as a decimal string, e.g. "2500.00".',
        "limits.0.amount": 'Send money as a decimal string, e.g. "1000000.00".',
    }


def test_money_as_a_string_is_taken(api, carrier):
    vehicle = VehicleFactory(client=carrier)
    response = api.put(f"/v1/vehicles/{vehicle.id}", {"statedValue": "145000"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["statedValue"] == "145000.00"


def test_a_number_for_a_profiles_minimum_limit_says_the_same(api):
    rules = [{"kind": "coverage", "coverageType": "AL", "minimumLimit": 1000000}]
    response = api.post("/v1/requirement-profiles", {"name": "N", "rules": rules}, format="json")
    assert errors(response) == {
        "rules.0.minimumLimit": 'Send money as a decimal string, e.g. "1000000.00".'
    }
