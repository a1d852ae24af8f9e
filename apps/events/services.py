"""Writes of events: the outbox every business service writes to inside its transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.db import connection, transaction
from django.utils import timezone
from djangorestframework_camel_case.util import camelize

from apps.core.serializers import UtcDateTimeField
from apps.events import positions
from apps.events.models import Event

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


# Where a recorded event goes next: the webhook deliveries, registered by apps.webhooks in
# its AppConfig.ready (events imports no app above it). "one" takes `event=`, "many" `events=`.
FAN_OUT: dict[str, Callable] = {}


def fan_out_register(*, one: Callable, many: Callable) -> None:
    """Name what every recorded event fans out to, one at a time and in bulk."""
    FAN_OUT.update(one=one, many=many)


def _json(data: dict) -> dict:
    """camelCase keys and JSON-safe values, as the API renders them."""
    import json

    from rest_framework.utils.encoders import JSONEncoder

    return json.loads(json.dumps(camelize(data), cls=JSONEncoder))


def _in_a_transaction(write: Callable[[], list[Event]]) -> list[Event]:
    """The events `write()` records, in the caller's transaction, positioned in the feed when
    it commits (apps.events.positions); in a transaction of their own when the caller has
    none (an event is never committed without its position)."""
    if not connection.in_atomic_block:
        with transaction.atomic():
            return _in_a_transaction(write)
    events = write()
    positions.at_commit(events)
    return events


def event_emit(*, type: str, agency_id: int, client_id: int | None, data: dict) -> Event:
    """Record one event in the caller's transaction (a rollback removes it; without one, in a
    transaction of its own) and fan it out to the matching webhook subscriptions, whose
    deliveries start once the transaction commits."""
    if type not in EVENT_TYPES:
        raise ValueError(f"Unknown event type {type!r}.")

    def write() -> list[Event]:
        event = Event.objects.create(
            type=type, agency_id=agency_id, client_id=client_id, data=_json(data)
        )
        if FAN_OUT:
            FAN_OUT["one"](event=event)
        return [event]

    return _in_a_transaction(write)[0]


def client_event_emit(*, type: str, client, data: dict, along: Sequence[dict] = ()) -> Event:
    """`event_emit` for a change to one client or its records: its agency and id. `along`: the
    events the same write causes (as `event_emit` keywords: a new record's status), recorded
    after it in the same insert (`events_emit_many`)."""
    item = {"type": type, "agency_id": client.agency_id, "client_id": client.pk, "data": data}
    if along:
        return events_emit_many([item, *along])[0]
    return event_emit(**item)


def record_event_emit(
    *,
    type: str,
    gone_type: str,
    client,
    data: dict,
    was: tuple[int, int],
    last_seen: dict | None,
) -> None:
    """`client_event_emit` of a write to a record that may have moved: `was` is where it was
    (agency id, client id). A record that moved tells the client it left too: within that
    agency, `type` with the record as it is now (`data`); when it went to another agency, whose
    data the one it left must not see, `gone_type` with the record as that agency last saw it
    (`last_seen`), marked deleted at the move's instant, as a deletion's record is (its
    `deletedAt`, for the records that have one; docs/webhooks.md)."""
    client_event_emit(type=type, client=client, data=data)
    agency_id, client_id = was
    if (agency_id, client_id) == (client.agency_id, client.pk):
        return
    if agency_id == client.agency_id:
        event_emit(type=type, agency_id=agency_id, client_id=client_id, data=data)
        return
    gone = {**(last_seen or {}), "deleted": True}
    if "deleted_at" in gone:  # the record shows when it was deleted: for that agency, now
        gone["deleted_at"] = UtcDateTimeField().to_representation(timezone.now())
    event_emit(type=gone_type, agency_id=agency_id, client_id=client_id, data=gone)


def events_emit_many(items: list[dict]) -> list[Event]:
    """Record many events at once (the daily calendar job): one insert, one subscription
    query and one insert of deliveries, whatever the number of events."""
    for item in items:
        if item["type"] not in EVENT_TYPES:
            raise ValueError(f"Unknown event type {item['type']!r}.")

    def write() -> list[Event]:
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
        if FAN_OUT:
            FAN_OUT["many"](events=events)
        return events

    return _in_a_transaction(write)
