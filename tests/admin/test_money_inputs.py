"""Money typed into a back-office form is judged as the API judges the same text.

One rule, written once (`StrictMoneyField`): plain ASCII decimal text, two places at most, no
exponent, no underscores, no other script's digits, no thousands separators. A vehicle's stated
value, a policy's premium, its limits and its rates are refused on their form with the API's
message, as a logged-in staff member posts the change form, beside the API called with the same
text; text the API takes is stored as the API stores it.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from apps.masterdata.models import UnitType
from apps.policies.models import PolicyLimit
from tests.admin.formdata import form_data
from tests.conftest import assert_problem
from tests.factories import ClientFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db

# What Django's DecimalField took (1e3, 1_000 and full-width digits were stored as 1000 and
# 12) or refused in words of its own ("Enter a number."), where the API answers 400.
REFUSED = [
    "1e3",
    "1E3",
    "1_000",
    "\uff11\uff12",  # full-width digits
    "1,234.50",  # a form is no spreadsheet: the API refuses a thousands separator
    "12,34",
    "$100",
    "NaN",
    "Infinity",
    "1234.567",
    "0.001",
    "99999999999999999",
]


def change_url(obj) -> str:
    return f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/{obj.pk}/change/"


def post_change(staff_client, obj, **overrides):
    url = change_url(obj)
    return staff_client.post(url, form_data(staff_client.get(url).content.decode(), **overrides))


def form_errors(response, field: str) -> list[str]:
    """The change form's errors on `field` (the form shown again, nothing saved)."""
    assert response.status_code == 200, response.status_code
    return list(response.context["adminform"].form.errors.get(field, []))


def inline_errors(response, prefix: str, row: int, field: str) -> list[str]:
    """The errors of an inline's row on `field`."""
    assert response.status_code == 200, response.status_code
    for inline in response.context["inline_admin_formsets"]:
        if inline.formset.prefix == prefix:
            return list(inline.formset.forms[row].errors.get(field, []))
    raise AssertionError(f"no inline {prefix}")


def api_message(api, method: str, path: str, body: dict, field: str) -> list[str]:
    """What the API answers on `field` for `body` (a 400)."""
    response = getattr(api, method)(path, body, format="json")
    errors = assert_problem(response, 400)["errors"]
    return [e["message"] for e in errors if e["field"] == field]


@pytest.fixture
def policy(agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency), premium=Decimal("1000.00"))
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    return policy


@pytest.mark.parametrize("text", REFUSED)
def test_a_stated_value_the_api_refuses_is_refused_on_the_vehicle_form_as_the_api_says(
    staff_client, api, agency, text
):
    unit = VehicleFactory(client=ClientFactory(agency=agency))
    response = post_change(staff_client, unit, stated_value=text)
    api_says = api_message(
        api, "put", f"/v1/vehicles/{unit.pk}", {"statedValue": text}, "statedValue"
    )
    assert form_errors(response, "stated_value") == api_says
    unit.refresh_from_db()
    assert unit.stated_value == Decimal("100000.00")


@pytest.mark.parametrize("text", REFUSED)
def test_a_premium_the_api_refuses_is_refused_on_the_policy_form_as_the_api_says(
    staff_client, api, policy, text
):
    response = post_change(staff_client, policy, premium=text)
    api_says = api_message(api, "put", f"/v1/policies/{policy.pk}", {"premium": text}, "premium")
    assert form_errors(response, "premium") == api_says
    policy.refresh_from_db()
    assert policy.premium == Decimal("1000.00")


@pytest.mark.parametrize("text", REFUSED)
def test_a_limit_the_api_refuses_is_refused_on_the_limits_inline_as_the_api_says(
    staff_client, api, policy, text
):
    response = post_change(staff_client, policy, **{"limits-0-amount": text})
    body = {"limits": [{"name": "Combined Single Limit", "amount": text}]}
    api_says = api_message(api, "put", f"/v1/policies/{policy.pk}", body, "limits.0.amount")
    assert inline_errors(response, "limits", 0, "amount") == api_says
    assert [limit.amount for limit in policy.limits.all()] == [Decimal("1000000.00")]


# The rates have no API; their amounts are money all the same, judged by the one rule (the
# premium per 100 dollars of value keeps four places, as its column does).
RATE_REFUSED = ["1e3", "1_000", "\uff11\uff12", "1,234.50", "$100", "NaN", "Infinity"]
RATE_FIELDS = ("annual_rate", "rate_per_100_value", "minimum_premium")


@pytest.mark.parametrize("field", RATE_FIELDS)
@pytest.mark.parametrize("text", RATE_REFUSED)
def test_a_rate_that_is_no_money_text_is_refused_on_the_rates_inline_as_the_api_says(
    staff_client, api, policy, field, text
):
    url = change_url(policy)
    data = form_data(staff_client.get(url).content.decode())
    total = int(data["rates-TOTAL_FORMS"])
    data["rates-TOTAL_FORMS"] = str(total + 1)
    row = {"annual_rate": "1200.00", "rate_per_100_value": "2.5", "minimum_premium": "500"}
    row[field] = text
    data[f"rates-{total}-unit_type"] = str(UnitType.objects.get(name="Tractor").pk)
    data.update({f"rates-{total}-{name}": value for name, value in row.items()})
    response = staff_client.post(url, data)
    api_says = api_message(api, "put", f"/v1/policies/{policy.pk}", {"premium": text}, "premium")
    assert inline_errors(response, "rates", total, field) == api_says
    assert not policy.rates.exists()


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("145000", Decimal("145000.00")),
        (" 98000.5 ", Decimal("98000.50")),
        ("0", Decimal("0.00")),
        ("+12.00", Decimal("12.00")),
    ],
)
def test_money_text_the_api_takes_is_stored_from_the_admin_as_the_api_stores_it(
    staff_client, api, agency, policy, text, stored
):
    unit = VehicleFactory(client=policy.client)
    assert post_change(staff_client, unit, stated_value=text).status_code == 302
    response = post_change(staff_client, policy, premium=text, **{"limits-0-amount": text})
    assert response.status_code == 302
    unit.refresh_from_db()
    policy.refresh_from_db()
    assert unit.stated_value == stored
    assert policy.premium == stored
    assert [limit.amount for limit in policy.limits.all()] == [stored]
    api_unit = api.get(f"/v1/vehicles/{unit.pk}").json()
    assert (
        api_unit["statedValue"]
        == api.put(f"/v1/vehicles/{unit.pk}", {"statedValue": text}, format="json").json()[
            "statedValue"
        ]
    )
