"""Verification status of many clients or units at once, by the rules verification applies.

A client is ACTIVE when it is live and one of its policies is in force on the day (what
`verify_clients` answers); a unit when it is live, its client is live and a period covers it
under a policy in force (what `verify_vehicles` answers); otherwise INACTIVE, or NOT_FOUND when
verification does not find it at all (a deleted client, a deleted unit or a unit of a deleted
client, a record not created yet, and, for the agency it left, a record that moved away). Two
queries per call, whatever the number of records.

`status_watch` wraps a write and emits `carrier.status_changed` / `vehicle.status_changed`
(and `compliance.changed`) for what the write changed, `status_events_of_new` announces what
a write created; the daily calendar job (apps.coverages.calendar) emits what the day alone
changed.

The order of a write's events (one transaction: one feed position, ordered by id, so the order
they are written in is the order the feed and the deliveries show): the record's own event
first, then the status and compliance events it caused, then notices (`policy.expiring`). So a
writer emits its record's event inside the `status_watch` block, as the block's last step, and
its notices after the block.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.db import transaction

from apps.clients.models import Client
from apps.compliance.monitoring import compliance_changes_emit, compliance_snapshot
from apps.core.dates import today
from apps.core.services import rows_lock
from apps.coverages.models import VehicleCoverage, is_live_unit
from apps.events.services import event_emit, events_emit_many
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle

ACTIVE, INACTIVE, NOT_FOUND = "ACTIVE", "INACTIVE", "NOT_FOUND"


def client_statuses(client_ids: Iterable[int], on: dt.date) -> dict[int, tuple[int, str]]:
    """{client id: (agency id, status)}."""
    ids = list(client_ids)
    in_force = set(
        Policy.objects.in_force_on(on)
        .filter(client_id__in_list=ids)
        .values_list("client_id", flat=True)
    )
    return {
        pk: (agency_id, _status(not deleted, pk in in_force))
        for pk, agency_id, deleted in Client.objects.filter(pk__in_list=ids).values_list(
            "pk", "agency_id", "deleted"
        )
    }


def _status(found: bool, covered: bool) -> str:
    """What verification answers of a record: not found (a deleted one is not looked at),
    else ACTIVE when covered on the day."""
    if not found:
        return NOT_FOUND
    return ACTIVE if covered else INACTIVE


def vehicle_statuses(vehicle_ids: Iterable[int], on: dt.date) -> dict[int, tuple[int, int, str]]:
    """{vehicle id: (agency id, client id, status)}."""
    ids = list(vehicle_ids)
    covered = set(
        VehicleCoverage.objects.filter(vehicle_id__in_list=ids)
        .covered_on(on)
        .values_list("vehicle_id", flat=True)
    )
    rows = Vehicle.objects.filter(pk__in_list=ids).values_list(
        "pk", "client__agency_id", "client_id", "deleted", "client__deleted"
    )
    return {
        pk: (agency_id, client_id, _status(not (deleted or client_deleted), pk in covered))
        for pk, agency_id, client_id, deleted, client_deleted in rows
    }


@contextmanager
def status_watch(
    *, client_ids: Iterable[int] = (), vehicle_ids: Iterable[int] = (), on: dt.date | None = None
) -> Iterator[None]:
    """Emit `carrier.status_changed` / `vehicle.status_changed` for every client or unit whose
    verification status (ACTIVE/INACTIVE, as verification computes it) differs after the block,
    and `compliance.changed` for every watched (client, profile) verdict that differs; a
    constant number of queries whatever the number of clients or units. They follow what the
    block emitted: the write announces its record inside the block (the module's docstring)."""
    day = on or today()
    clients = {pk for pk in client_ids if pk is not None}
    vehicles = {pk for pk in vehicle_ids if pk is not None}
    # A client's verdict under a watched profile (issue 16) moves with the same writes as
    # its status; one query when no subscription watches a profile.
    with transaction.atomic():
        _lock(clients, vehicles)
        before_c = client_statuses(clients, day) if clients else {}
        before_v = vehicle_statuses(vehicles, day) if vehicles else {}
        before_p = compliance_snapshot(on=day, client_ids=clients) if clients else {}
        yield
        after_c = client_statuses(clients, day) if clients else {}
        after_v = vehicle_statuses(vehicles, day) if vehicles else {}
        status_events_emit(before_c, after_c, before_v, after_v, day)
        if before_p:
            after_p = compliance_snapshot(on=day, client_ids=clients)
            compliance_changes_emit(before=before_p, after=after_p, day=day)


def _lock(clients: set[int], vehicles: set[int]) -> None:
    """Lock the watched rows before reading their status: two writes that change one unit's
    or client's status at once (two removals, a removal and a scheduling, a cancellation and a
    new policy) then read it one after the other, and each announces the change it made (each
    read the other's result). Clients before units: the order every write takes (a client, its
    policies, their units)."""
    if clients:
        rows_lock(Client.objects.filter(pk__in_list=sorted(clients)))
    if vehicles:
        rows_lock(Vehicle.objects.filter(pk__in_list=sorted(vehicles)))


def status_events_of_new(*, clients: Iterable = (), vehicles: Iterable = ()) -> list[dict]:
    """The status events (as `event_emit` keywords) of records a write has just created, to be
    recorded with its own event: verification did not find them before (NOT_FOUND) and finds
    them now, unless created deleted (a unit, or its client); nothing covers them yet (no policy
    or period names a record that did not exist), so they are INACTIVE. No query."""
    after_c = {c.pk: (c.agency_id, _status(not c.deleted, covered=False)) for c in clients}
    after_v = {
        v.pk: (
            v.client.agency_id,
            v.client_id,
            _status(is_live_unit(v), covered=False),
        )
        for v in vehicles
    }
    return status_events({}, after_c, {}, after_v, today())


def _changed(before: dict, after: dict) -> Iterator[tuple[int, tuple, str, str]]:
    """(id, row, old status, new status) of each record whose status (the row's last item)
    differs from before, as each agency's verification answers it; a record unknown before was
    NOT_FOUND. A record that moved to another agency (the row's first item) is NOT_FOUND for
    its old agency from now on, and was NOT_FOUND for its new one: each agency hears of it."""
    for pk, row in sorted(after.items()):
        was = before.get(pk)
        if was is not None and was[0] != row[0]:
            changes = [(was, was[-1], NOT_FOUND), (row, NOT_FOUND, row[-1])]
        else:
            changes = [(row, was[-1] if was is not None else NOT_FOUND, row[-1])]
        for seen_as, old, new in changes:
            if old != new:
                yield pk, seen_as, old, new


def status_events(before_c: dict, after_c: dict, before_v: dict, after_v: dict, day) -> list:
    """One status event (as `event_emit` keywords) per client or unit whose status differs."""
    changes = [
        ("carrier.status_changed", agency_id, pk, {"client_id": pk}, old, new)
        for pk, (agency_id, _status), old, new in _changed(before_c, after_c)
    ] + [
        ("vehicle.status_changed", agency_id, client_id, {"vehicle_id": pk}, old, new)
        for pk, (agency_id, client_id, _status), old, new in _changed(before_v, after_v)
    ]
    return [
        {
            "type": type_,
            "agency_id": agency_id,
            "client_id": client_id,
            "data": {**record, "from": old, "to": new, "as_of": day},
        }
        for type_, agency_id, client_id, record, old, new in changes
    ]


def status_events_emit(before_c: dict, after_c: dict, before_v: dict, after_v: dict, day) -> int:
    """Emit one status event per client or unit whose status differs; how many."""
    items = status_events(before_c, after_c, before_v, after_v, day)
    if len(items) == 1:
        event_emit(**items[0])
    elif items:
        # A client deleted with its whole fleet: one insert and one fan-out for all of them.
        events_emit_many(items)
    return len(items)
