"""The status of a policy on a date is one rule written twice, side by side in
apps/policies/models.py: in Python for a loaded policy and in SQL for filtering and sorting.
These tests run both on a grid of policies and dates and require the same answers."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.policies.choices import PolicyStatus
from apps.policies.models import Policy, will_expire_q
from tests.factories import ClientFactory, PolicyFactory

START = dt.date(2026, 1, 10)
END = dt.date(2027, 1, 10)
CANCELLATIONS = [
    None,
    START,
    START + dt.timedelta(days=40),
    END - dt.timedelta(days=1),
    END,
    END + dt.timedelta(days=1),
]
GRID = sorted(
    {START + dt.timedelta(days=n) for n in (-2, -1, 0, 1, 39, 40, 41)}
    | {END + dt.timedelta(days=n) for n in (-2, -1, 0, 1)}
)


@pytest.fixture
def policies(db) -> list[Policy]:
    client = ClientFactory()
    made = [
        PolicyFactory(
            client=client,
            effective_date=START,
            expiration_date=END,
            cancellation_date=cancelled,
            deleted=deleted,
        )
        for cancelled in CANCELLATIONS
        for deleted in (False, True)
    ]
    return made


def test_status_on_and_status_expression_agree_on_every_date(policies):
    ids = [p.pk for p in policies]
    for on in GRID:
        in_sql = dict(Policy.objects.filter(pk__in=ids).with_status(on).values_list("pk", "status"))
        assert in_sql == {p.pk: p.status_on(on) for p in policies}, on


def test_in_force_in_python_and_sql_agree_on_every_date(policies):
    ids = [p.pk for p in policies]
    for on in GRID:
        in_sql = set(Policy.objects.filter(pk__in=ids).in_force_on(on).values_list("pk", flat=True))
        assert in_sql == {p.pk for p in policies if p.in_force_on(on)}, on


def test_in_force_means_live_and_active(policies):
    for on in GRID:
        for policy in policies:
            expected = not policy.deleted and policy.status_on(on) == PolicyStatus.ACTIVE
            assert policy.in_force_on(on) is expected


def test_not_ended_is_active_or_future(policies):
    ids = [p.pk for p in policies]
    for on in GRID:
        in_sql = set(
            Policy.objects.filter(pk__in=ids).not_ended_on(on).values_list("pk", flat=True)
        )
        expected = {
            p.pk for p in policies if p.status_on(on) in (PolicyStatus.ACTIVE, PolicyStatus.FUTURE)
        }
        assert in_sql == expected, on


def test_the_term_includes_its_first_day_and_excludes_its_expiration(policies):
    policy = policies[0]
    assert not policy.in_term(START - dt.timedelta(days=1))
    assert policy.in_term(START)
    assert policy.in_term(END - dt.timedelta(days=1))
    assert not policy.in_term(END)


def test_will_expire_in_python_and_sql_agree_and_mean_expired_on_the_expiration(policies):
    ids = [p.pk for p in policies]
    in_sql = set(Policy.objects.filter(will_expire_q(), pk__in=ids).values_list("pk", flat=True))
    assert in_sql == {p.pk for p in policies if p.will_expire}
    expected = {p.pk for p in policies if p.status_on(p.expiration_date) == PolicyStatus.EXPIRED}
    assert in_sql == expected
    # Only a cancellation dated after the expiration leaves the policy to expire.
    assert {p.cancellation_date for p in policies if p.will_expire} == {
        None,
        END + dt.timedelta(days=1),
    }


def test_expiring_within_is_in_force_and_will_expire_by_the_last_day(policies):
    ids = [p.pk for p in policies]
    for on in GRID:
        for days in (0, 1, 30):
            expiring = Policy.objects.filter(pk__in=ids).expiring_within(on, days)
            expected = {
                p.pk
                for p in policies
                if p.in_force_on(on)
                and p.will_expire
                and p.expiration_date <= on + dt.timedelta(days=days)
            }
            assert set(expiring.values_list("pk", flat=True)) == expected, (on, days)
