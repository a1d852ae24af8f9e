"""Writes of events: the outbox every business service writes to inside its transaction."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.db import transaction
from djangorestframework_camel_case.util import camelize

from apps.events.models import Event
from apps.events.status import client_statuses, vehicle_statuses

EVENT_TYPES = (
    "client.created",
    "client.updated",
    "client.deleted",
    "client.restored",
    "policy.created",
    "policy.updated",
    "policy.cancelled",
    "policy.deleted",
    "policy.restored",
    "policy.effective",
    "policy.expiring",
    "policy.expired",
    "vehicle.created",
    "vehicle.updated",
    "vehicle.scheduled",
    "vehicle.removed",
    "vehicle.declined",
    "vehicle.rescheduled",
    "driver.scheduled",
    "driver.removed",
    "driver.declined",
    "driver.rescheduled",
    "document.uploaded",
    "document.replaced",
    "document.deleted",
    "carrier.status_changed",
    "vehicle.status_changed",
    "compliance.changed",
    "webhook.ping",
)


def _json(data: dict) -> dict:
    """camelCase keys and JSON-safe values, as the API renders them."""
    import json

    from rest_framework.utils.encoders import JSONEncoder

    return json.loads(json.dumps(camelize(data), cls=JSONEncoder))


def event_emit(*, type: str, agency_id: int, client_id: int | None, data: dict) -> Event:
    """Record one event in the caller's transaction (a rollback removes it) and fan it out to
    the matching webhook subscriptions, whose deliveries start once the transaction commits."""
    if type not in EVENT_TYPES:
        raise ValueError(f"Unknown event type {type!r}.")
    event = Event.objects.create(
        type=type, agency_id=agency_id, client_id=client_id, data=_json(data)
    )
    from apps.webhooks.services import deliveries_fan_out

    deliveries_fan_out(event=event)
    return event


def client_event_emit(*, type: str, client, data: dict) -> Event:
    """`event_emit` for a change to one client or its records: its agency and id."""
    return event_emit(type=type, agency_id=client.agency_id, client_id=client.pk, data=data)


def events_emit_many(items: list[dict]) -> list[Event]:
    """Record many events at once (the daily calendar job): one insert, one subscription
    query and one insert of deliveries, whatever the number of events."""
    for item in items:
        if item["type"] not in EVENT_TYPES:
            raise ValueError(f"Unknown event type {item['type']!r}.")
    events = Event.objects.bulk_create(
        [
            Event(
                type=i["type"],
                agency_id=i["agency_id"],
                client_id=i["client_id"],
                data=_json(i["data"]),
            )
            for i in items
        ],
        batch_size=1000,
    )
    from apps.webhooks.services import deliveries_fan_out_many

    deliveries_fan_out_many(events=events)
    return events


@contextmanager
def status_watch(
    *, client_ids: Iterable[int] = (), vehicle_ids: Iterable[int] = (), on: dt.date | None = None
) -> Iterator[None]:
    """Emit `carrier.status_changed` / `vehicle.status_changed` for every client or unit whose
    verification status (ACTIVE/INACTIVE, as verification computes it) differs after the block,
    and `compliance.changed` for every watched (client, profile) verdict that differs; a
    constant number of queries whatever the number of clients or units."""
    from apps.core.dates import today

    day = on or today()
    clients = {pk for pk in client_ids if pk is not None}
    vehicles = {pk for pk in vehicle_ids if pk is not None}
    # A client's verdict under a watched profile (issue 16) moves with the same writes as
    # its status; one query when no subscription watches a profile.
    from apps.compliance.monitoring import compliance_changes_emit, compliance_snapshot

    with transaction.atomic():
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


def status_events(before_c: dict, after_c: dict, before_v: dict, after_v: dict, day) -> list:
    """One status event (as `event_emit` keywords) per client or unit whose status differs."""
    items = []
    for pk, (agency_id, new) in sorted(after_c.items()):
        old = before_c.get(pk, (agency_id, "INACTIVE"))[1]
        if old != new:
            items.append(
                {
                    "type": "carrier.status_changed",
                    "agency_id": agency_id,
                    "client_id": pk,
                    "data": {"client_id": pk, "from": old, "to": new, "as_of": day},
                }
            )
    for pk, (agency_id, client_id, new) in sorted(after_v.items()):
        old = before_v.get(pk, (agency_id, client_id, "INACTIVE"))[2]
        if old != new:
            items.append(
                {
                    "type": "vehicle.status_changed",
                    "agency_id": agency_id,
                    "client_id": client_id,
                    "data": {"vehicle_id": pk, "from": old, "to": new, "as_of": day},
                }
            )
    return items


def status_events_emit(before_c: dict, after_c: dict, before_v: dict, after_v: dict, day) -> int:
    """Emit one status event per client or unit whose status differs; how many."""
    items = status_events(before_c, after_c, before_v, after_v, day)
    for item in items:
        event_emit(**item)
    return len(items)
