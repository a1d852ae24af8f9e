"""The rule "live" is written once (apps.core.models.live_q, SoftDeleteQuerySet.live): these
tests state it without HTTP."""

from __future__ import annotations

import re
from pathlib import Path

from apps.clients.models import Client
from apps.core.models import live_q
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle
from tests.factories import ClientFactory, PolicyFactory, VehicleFactory


def test_live_excludes_soft_deleted_records(db):
    kept = ClientFactory()
    ClientFactory(deleted=True)

    assert list(Client.objects.filter(pk__in=[kept.pk]).live()) == [kept]
    assert set(Client.objects.live().values_list("pk", flat=True)) >= {kept.pk}
    assert not Client.objects.live().filter(deleted=True).exists()


def test_live_keeps_a_record_whose_owner_is_deleted_unless_the_owner_is_named(db):
    gone = ClientFactory(deleted=True)
    unit = VehicleFactory(client=gone)
    policy = PolicyFactory(client=gone)

    assert list(Vehicle.objects.filter(pk=unit.pk).live()) == [unit]
    assert not Vehicle.objects.filter(pk=unit.pk).live("client").exists()
    assert list(Policy.objects.filter(pk=policy.pk).live()) == [policy]
    assert not Policy.objects.filter(pk=policy.pk).live("client").exists()


def test_live_q_crosses_relations_with_the_same_rule(db):
    carrier = ClientFactory()
    live_unit = VehicleFactory(client=carrier)
    VehicleFactory(client=carrier, deleted=True)

    assert list(carrier.vehicles.filter(live_q())) == [live_unit]
    assert list(Client.objects.filter(live_q("vehicles"), pk=carrier.pk)) == [carrier]


def test_no_module_writes_the_live_rule_by_hand():
    """`deleted=False` (or its lookups) spelled out beside live_q drifts from it the day the
    rule changes; apps/core/models.py is the one place it is written."""
    apps = Path(__file__).resolve().parents[2] / "apps"
    by_hand = re.compile(r"""\bdeleted(__exact)?\s*=\s*False\b|["']deleted["']\s*:\s*False\b""")
    found = [
        f"{path.relative_to(apps)}:{number}"
        for path in sorted(apps.rglob("*.py"))
        if "migrations" not in path.parts and path != apps / "core" / "models.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if by_hand.search(line)
    ]
    assert found == []
