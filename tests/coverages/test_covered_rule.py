"""The rule "covered on a date" is one rule written twice, side by side in apps/coverages/models.py:
`Coverage.covered_on` for a loaded period and `covered_q` / `covered_on()` in SQL. These
tests run both on a grid of periods, policies and dates and require the same answers. The SQL
form runs on units read live (verification reads `live("client")`); the Python form is told
whether its unit is, and a unit that is not is covered by nothing."""

from __future__ import annotations

import datetime as dt

from apps.coverages.models import VehicleCoverage
from tests.factories import ClientFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

START = dt.date(2026, 1, 10)
END = dt.date(2027, 1, 10)
GRID = [START + dt.timedelta(days=n) for n in (-1, 0, 1, 19, 20, 21, 59, 60, 61, 364, 365, 366)]


def test_covered_on_in_python_and_sql_agree_on_every_date(db):
    client = ClientFactory()
    policies = [
        PolicyFactory(client=client, effective_date=START, expiration_date=END),
        PolicyFactory(
            client=client,
            effective_date=START,
            expiration_date=END,
            cancellation_date=START + dt.timedelta(days=60),
        ),
        PolicyFactory(client=client, effective_date=START, expiration_date=END, deleted=True),
    ]
    periods = []
    for policy in policies:
        for added, removed in [
            (START, None),
            (START + dt.timedelta(days=20), None),
            (START, START + dt.timedelta(days=20)),
        ]:
            periods.append(
                VehicleCoverageFactory(
                    vehicle=VehicleFactory(client=client),
                    policy=policy,
                    policy_added_date=added,
                    policy_removed_date=removed,
                )
            )
    ids = [p.pk for p in periods]
    for on in GRID:
        in_sql = set(
            VehicleCoverage.objects.filter(pk__in=ids).covered_on(on).values_list("pk", flat=True)
        )
        assert in_sql == {p.pk for p in periods if p.covered_on(on, unit_live=True)}, on
        assert not [p for p in periods if p.covered_on(on, unit_live=False)], on
        covering = VehicleCoverage.objects.filter(pk__in=ids).covering_on(on)
        assert set(covering.values_list("pk", flat=True)) == {
            p.pk for p in periods if p.covers_on(on)
        }, on


def test_a_period_is_not_coverage_when_its_policy_is_not_in_force(db):
    policy = PolicyFactory(
        effective_date=START, expiration_date=END, cancellation_date=START + dt.timedelta(days=5)
    )
    period = VehicleCoverageFactory(vehicle=VehicleFactory(client=policy.client), policy=policy)

    assert period.covers_on(START + dt.timedelta(days=10))
    assert not period.covered_on(START + dt.timedelta(days=10), unit_live=True)
    assert period.covered_on(START + dt.timedelta(days=4), unit_live=True)


def test_the_sql_helpers_cover_only_the_units_periods_covering_covers(db):
    """The back office's "covered today" (`covered_today_filter` on a list of units,
    `covered_vehicle_ids` on a page of them) is the one rule: a period covering the day under
    a policy in force, on a unit that is live and whose client is live (`periods_covering`,
    verification). A deleted unit, and every unit of a deleted client, is covered by nothing."""
    from apps.clients.models import Client
    from apps.coverages.models import periods_covering
    from apps.coverages.selectors import covered_today_filter, covered_vehicle_ids
    from apps.vehicles.models import Vehicle

    on = START + dt.timedelta(days=30)
    live_client, gone_client = ClientFactory(), ClientFactory()
    units = []
    for client in (live_client, gone_client):
        policy = PolicyFactory(client=client, effective_date=START, expiration_date=END)
        for deleted, scheduled in [(False, True), (True, True), (False, False)]:
            unit = VehicleFactory(client=client, deleted=deleted)
            if scheduled:
                VehicleCoverageFactory(vehicle=unit, policy=policy, policy_added_date=START)
            units.append(unit)
    Client.objects.filter(pk=gone_client.pk).update(deleted=True)
    ids = [unit.pk for unit in units]
    loaded = Vehicle.objects.filter(pk__in=ids).select_related("client")
    expected = {
        u.pk for u in loaded.prefetch_related("coverages__policy") if periods_covering(u, on)
    }

    assert expected == {units[0].pk}  # the live, scheduled unit of the live client only
    in_sql = Vehicle.objects.filter(pk__in=ids).filter(covered_today_filter(on))
    assert set(in_sql.values_list("pk", flat=True)) == expected
    not_covered = Vehicle.objects.filter(pk__in=ids).exclude(covered_today_filter(on))
    assert set(not_covered.values_list("pk", flat=True)) == set(ids) - expected
    assert covered_vehicle_ids(ids, on) == expected
