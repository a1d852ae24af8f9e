"""Reads of events: the change feed (contract section 14)."""

from __future__ import annotations

import base64
import binascii
from typing import NamedTuple

from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

from apps.events.models import Event


class BadCursor(ValueError):
    """The `after` value is not a cursor this feed gave out."""


class Cursor(NamedTuple):
    """The event a page ends with, and the cursor as the caller sent it (the next page's
    `next` when nothing follows it)."""

    txid: int
    pk: int
    text: str


def cursor_encode(event: Event) -> str:
    return base64.urlsafe_b64encode(f"{event.txid}.{event.pk}".encode()).decode().rstrip("=")


def cursor_decode(raw: str) -> Cursor:
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("ascii")
        txid, pk = text.split(".")
        if not (txid.isdigit() and pk.isdigit()) or len(txid) > 19 or len(pk) > 19:
            raise ValueError
        return Cursor(int(txid), int(pk), raw)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadCursor("Not a cursor of this feed.") from None


def event_feed(
    *,
    user,
    after: Cursor | None,
    limit: int,
    types: list[str] | None = None,
    client_id: int | None = None,
) -> list[Event]:
    """The caller's agencies' events after the cursor, oldest first, that can no longer be
    preceded by another: on PostgreSQL only events of transactions older than every running
    one (`txid < xmin` of the current snapshot), ordered by (txid, id); a transaction that
    commits late has a txid at or above that horizon, so it appears after the cursor, never
    behind it. SQLite serialises writers, so there the id order is the commit order."""
    events = Event.objects.for_user(user)
    if connection.vendor == "postgresql":
        # Plus the reader's own transaction's events, which it sees anyway (read your writes).
        events = events.filter(
            Q(txid__lt=RawSQL("txid_snapshot_xmin(txid_current_snapshot())", []))
            | Q(txid=RawSQL("txid_current_if_assigned()", []))
        )
    if after is not None:
        events = events.filter(Q(txid__gt=after.txid) | Q(txid=after.txid, pk__gt=after.pk))
    if types:
        events = events.filter(type__in=types)
    if client_id is not None:
        events = events.filter(client_id=client_id)
    return list(events.order_by("txid", "id")[:limit])
