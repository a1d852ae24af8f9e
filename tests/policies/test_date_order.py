"""A policy's dates in order: the model's constraints are the rule, answered on the field.

Whole problem bodies, so the field, its message, the status and the detail are all pinned,
whether the dates come from a create, a partial update or both dates at once.
"""

from __future__ import annotations

import datetime as dt

import pytest

from apps.policies.models import Policy
from tests.conftest import assert_problem
from tests.factories import PolicyFactory

pytestmark = pytest.mark.django_db

EXPIRATION = ("expirationDate", "Must be after the effective date.")
CANCELLATION = ("cancellationDate", "Cannot precede the effective date.")


def payload(client, **extra):
    return {
        "clientId": client.id,
        "effectiveDate": "2026-01-01",
        "expirationDate": "2027-01-01",
        "coverageType": "AL",
        **extra,
    }


def problem(field: str, message: str) -> dict:
    """The whole 400 answer naming one field."""
    return {
        "type": "about:blank",
        "title": "Bad Request",
        "status": 400,
        "detail": f"{field}: {message}",
        "errors": [{"field": field, "message": message, "code": "invalid"}],
    }


@pytest.mark.parametrize("expiration", ["2026-01-01", "2025-12-31"])
def test_create_with_expiration_not_after_effective_is_400_on_expiration(api, carrier, expiration):
    response = api.post("/v1/policies", payload(carrier, expirationDate=expiration), format="json")
    body = assert_problem(response, 400)
    assert body == problem(*EXPIRATION)
    assert not Policy.objects.exists()


def test_create_with_cancellation_before_effective_is_400_on_cancellation(api, carrier):
    response = api.post(
        "/v1/policies", payload(carrier, cancellationDate="2025-12-31"), format="json"
    )
    body = assert_problem(response, 400)
    assert body == problem(*CANCELLATION)


def test_create_with_cancellation_on_effective_date_is_accepted(api, carrier):
    response = api.post(
        "/v1/policies", payload(carrier, cancellationDate="2026-01-01"), format="json"
    )
    assert response.status_code == 201, response.content


def test_update_moving_expiration_before_effective_is_400_and_changes_nothing(api, carrier):
    policy = PolicyFactory(client=carrier)
    before = policy.expiration_date
    late = (policy.effective_date - dt.timedelta(days=1)).isoformat()
    response = api.put(f"/v1/policies/{policy.id}", {"expirationDate": late}, format="json")
    body = assert_problem(response, 400)
    assert body == problem(*EXPIRATION)
    policy.refresh_from_db()
    assert policy.expiration_date == before


def test_update_moving_effective_past_cancellation_is_400_on_cancellation(api, carrier):
    policy = PolicyFactory(client=carrier, cancellation_date=None)
    cancelled = policy.effective_date + dt.timedelta(days=10)
    api.put(f"/v1/policies/{policy.id}", {"cancellationDate": cancelled.isoformat()}, format="json")
    later = (cancelled + dt.timedelta(days=1)).isoformat()
    response = api.put(f"/v1/policies/{policy.id}", {"effectiveDate": later}, format="json")
    body = assert_problem(response, 400)
    assert body == problem(*CANCELLATION)


def test_both_dates_out_of_order_name_both_fields(api, carrier):
    # Named change: the service stopped at the first date; the model's rules report each.
    body = payload(carrier, expirationDate="2025-12-31", cancellationDate="2025-06-01")
    errors = assert_problem(api.post("/v1/policies", body, format="json"), 400)["errors"]
    assert errors == [*problem(*EXPIRATION)["errors"], *problem(*CANCELLATION)["errors"]]


def test_a_taken_number_with_dates_out_of_order_is_409_like_any_taken_number(api, carrier):
    # Named change: was 400 on the dates; a broken uniqueness rule is 409 whatever else failed.
    first = PolicyFactory(client=carrier, policy_number="P-1")
    body = payload(
        carrier, policyNumber="P-1", insurerName=first.insurer.name, expirationDate="2025-12-31"
    )
    answer = assert_problem(api.post("/v1/policies", body, format="json"), 409)
    assert answer["detail"] == "A live policy numbered P-1 exists for this insurer in this agency."
