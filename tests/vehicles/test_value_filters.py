"""The value filters (`minValue`, `maxValue` of the vehicle lists) read an amount as the API's
body reads money (apps.core.money: plain ASCII decimal text, at most 12 digits before the point
and 2 after): a value a vehicle's `statedValue` takes, they take; one it refuses, they refuse
with its message, a 400 naming the parameter. Django's DecimalField read them as Python reads
a number: `1e3` was 1000, `12.345` was refused in words of its own."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import assert_problem
from tests.factories import PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db

# Amounts a stated value may hold: its column's own limits (10 digits before the point, not
# below zero) are the column's, not the reading of money, and bound no filter.
TAKEN = ["1000", "1000.5", "1000.50", " 1000 ", "+1000", "0", "-0.00", "99999999.99"]
REFUSED = [
    "1e3",
    "12.345",
    "1,234.50",
    "NaN",
    "Infinity",
    "1_000",
    "\uff11\uff10\uff10\uff10",  # full-width digits
    ".5",
    "5.",
    "abc",
    "1000000000000",  # 13 digits before the point
]


def answer(response) -> tuple[str, str, str] | None:
    """None for a 200; the one error's field, message and code (always a string) for a 400."""
    if response.status_code == 200:
        return None
    (error,) = assert_problem(response, 400)["errors"]
    assert isinstance(error["code"], str), error
    return error["field"], error["message"], error["code"]


@pytest.fixture
def unit(carrier):
    vehicle = VehicleFactory(client=carrier, stated_value=Decimal("5000"))
    VehicleCoverageFactory(vehicle=vehicle, policy=PolicyFactory(client=carrier))
    return vehicle


@pytest.mark.parametrize("sent", TAKEN + REFUSED)
@pytest.mark.parametrize("parameter", ["minValue", "maxValue"])
def test_a_value_filter_takes_and_refuses_what_a_bodys_money_field_does(api, unit, sent, parameter):
    body = answer(api.put(f"/v1/vehicles/{unit.id}", {"statedValue": sent}, format="json"))
    assert (body is None) == (sent in TAKEN), body
    expected = None if body is None else (parameter, *body[1:])
    policy_id = unit.coverages.get().policy_id
    for path in ("/v1/vehicles", f"/v1/policies/{policy_id}/vehicles"):
        assert answer(api.get(path, {parameter: sent})) == expected, path
