"""Which policies the back-office calls expiring: the ones that will expire.

One rule, the calendar's (`policy.expiring`): a policy is expiring only if its status on its
expiration date will be EXPIRED. One cancelled effective on or before that date ends by its
cancellation and never expires, so neither the policies list's "expiring" filter nor the
dashboard's "Policies expiring in 30 days" counts it; one cancelled after it still expires.
"""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from tests.factories import ClientFactory, PolicyFactory

pytestmark = pytest.mark.django_db


def _policy(carrier, number: str, *, expires_in: int, cancelled_in: int | None = None):
    on = today()
    return PolicyFactory(
        client=carrier,
        policy_number=number,
        effective_date=on - dt.timedelta(days=300),
        expiration_date=on + dt.timedelta(days=expires_in),
        cancellation_date=None if cancelled_in is None else on + dt.timedelta(days=cancelled_in),
    )


@pytest.fixture
def policies(agency) -> dict[str, object]:
    carrier = ClientFactory(agency=agency)
    return {
        "expires": _policy(carrier, "EXPIRES", expires_in=20),
        "cancelled before": _policy(carrier, "CANCELLED-BEFORE", expires_in=20, cancelled_in=10),
        "cancelled on": _policy(carrier, "CANCELLED-ON", expires_in=20, cancelled_in=20),
        "cancelled after": _policy(carrier, "CANCELLED-AFTER", expires_in=20, cancelled_in=21),
        "in 45 days": _policy(carrier, "IN-45-DAYS", expires_in=45),
        "in 45, cancelled in 40": _policy(carrier, "IN-45-CXL-40", expires_in=45, cancelled_in=40),
    }


def _listed(staff_client, query: str) -> set[str]:
    response = staff_client.get(f"/admin/policies/policy/?{query}")
    assert response.status_code == 200
    return {policy.policy_number for policy in response.context["cl"].result_list}


def test_the_expiring_filter_lists_only_policies_that_will_expire(staff_client, policies):
    assert _listed(staff_client, "expiring=30") == {"EXPIRES", "CANCELLED-AFTER"}
    assert _listed(staff_client, "expiring=60") == {"EXPIRES", "CANCELLED-AFTER", "IN-45-DAYS"}


def test_the_dashboard_counts_only_policies_that_will_expire_in_30_days(staff_client, policies):
    response = staff_client.get("/admin/")
    counts = {tile["label"]: tile["count"] for tile in response.context["dashboard"]}
    assert counts["Policies expiring in 30 days"] == 2  # EXPIRES, CANCELLED-AFTER
