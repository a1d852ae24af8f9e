"""Reads of events: the change feed (contract section 14), and what a daily comparison of
states has already announced."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from typing import NamedTuple

from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

from apps.core.dates import today
from apps.events.models import Event

# Event types sent to one subscription only, never in the feed: no change of an agency's
# records (a ping names a subscription, which the feed's readers may not see).
NOT_IN_FEED = frozenset({"webhook.ping"})


class BadCursor(ValueError):
    """The `after` value is not a cursor this feed gave out."""


class Cursor(NamedTuple):
    """The event a page ends with, and the cursor as the caller sent it (the next page's
    `next` when nothing follows it)."""

    txid: int
    pk: int
    text: str


def _spelt(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def cursor_encode(event: Event) -> str:
    return _spelt(f"{event.txid}.{event.pk}")


def cursor_decode(raw: str) -> Cursor:
    """The position `raw` spells, as `cursor_encode` spells it (or with base64's own padding)
    and only so: the decoder drops characters outside its alphabet and ignores unused bits, so
    what it gives is encoded again and compared (`MC41!!` and `MC41===` are not `0.5`)."""
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("ascii")
        txid, pk = text.split(".")
        if not (txid.isdigit() and pk.isdigit()) or len(txid) > 19 or len(pk) > 19:
            raise ValueError
        spelt = _spelt(text)
        if raw not in (spelt, spelt + "=" * (-len(spelt) % 4)):
            raise ValueError
        return Cursor(int(txid), int(pk), raw)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadCursor("Not a cursor of this feed.") from None


# PostgreSQL: the horizon of the feed, the oldest transaction still running (`xmin` of the current
# snapshot), and the reader's own transaction, whose events it sees anyway (read your writes).
# The feed shows the events below the horizon and the reader's own; a cursor is checked the same.
HORIZON = "txid_snapshot_xmin(txid_current_snapshot())"
OWN_TRANSACTION = "txid_current_if_assigned()"


def event_feed(
    *,
    user,
    after: Cursor | None,
    limit: int,
    types: list[str] | None = None,
    client_id: int | None = None,
) -> list[Event]:
    """The caller's agencies' events after the cursor (but those NOT_IN_FEED), oldest first,
    that can no longer be
    preceded by another: on PostgreSQL only events of transactions older than every running
    one (`txid < xmin` of the current snapshot), ordered by (txid, id); a transaction that
    commits late has a txid at or above that horizon, so it appears after the cursor, never
    behind it. SQLite serialises writers, so there the id order is the commit order.

    A cursor past the feed's head (`given_by_this_feed`) is a BadCursor: its caller would get
    nothing, new events included, and be told nothing."""
    events = Event.objects.for_user(user).exclude(type__in=NOT_IN_FEED)
    if connection.vendor == "postgresql":
        events = events.filter(
            Q(txid__lt=RawSQL(HORIZON, [])) | Q(txid=RawSQL(OWN_TRANSACTION, []))
        )
    if after is not None:
        events = events.filter(Q(txid__gt=after.txid) | Q(txid=after.txid, pk__gt=after.pk))
    if types:
        events = events.filter(type__in=types)
    if client_id is not None:
        events = events.filter(client_id=client_id)
    page = list(events.order_by("txid", "id")[:limit])
    # A cursor past the head never has a page after it: only an empty page asks.
    if not page and after is not None and not given_by_this_feed(after):
        raise BadCursor("Not a cursor of this feed.")
    return page


def given_by_this_feed(cursor: Cursor) -> bool:
    """Whether the feed could have given this cursor: a position no later than its head, kept
    events or not. A cursor is the (txid, id) of an event a page showed, or one sent back and
    echoed by an empty page, and the head only moves on, so a cursor once given stays good:

    - PostgreSQL: a page shows events of transactions below the horizon (`HORIZON`), which only
      rises, or of the reader's own; so the cursor's txid is below the horizon now, or the
      reader's transaction's. Its id is not checked: every event after the cursor's
      transaction has a higher txid.
    - SQLite: every event's txid is 0, and an id is never given twice (AUTOINCREMENT): the id is
      at most the last one given (`sqlite_sequence`), whether or not that event is still kept.

    One query (none for a txid SQLite never writes); other databases are not checked."""
    # The head is read and compared here: a cursor's numbers may pass what a column holds.
    with connection.cursor() as db:
        if connection.vendor == "postgresql":
            db.execute(f"SELECT {HORIZON}, {OWN_TRANSACTION}")
            horizon, own = db.fetchone()
            return cursor.txid < horizon or cursor.txid == own
        if connection.vendor == "sqlite":
            if cursor.txid != 0:
                return False
            db.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [Event._meta.db_table])
            last = db.fetchone()
            return cursor.pk <= (last[0] if last else 0)
    return True


class Watched(NamedTuple):
    """One event type a daily comparison watches (`already_announced`): its subjects' states
    the day before and on the day, keyed by the fields of the event's data that name a
    subject (one field: its value; several: their tuple), and the index in a state of what
    the event announces (its `to`)."""

    before: dict
    after: dict
    key: tuple[str, ...]
    announced_at: int


def already_announced(*, day: dt.date, watched: dict[str, Watched]) -> None:
    """Never twice for the same subject and day, never behind a later announcement (one query
    over the watched events dated from the day on; none when nothing is watched):

    - a write made earlier on the day (a removal dated today, a cancellation effective today)
      already announced its change, so the day's comparison starts from what was announced
      for the day, when something was, instead of from the day before;
    - a missed day caught up later: a subject whose state a write announced after that day is
      left out of the day's comparison (its last announcement is current).

    For the daily calendar job's status and compliance events (apps.coverages.calendar,
    apps.compliance.monitoring)."""
    if not any(w.before for w in watched.values()):
        return
    later = max((today() - day).days, 0)
    as_of = [(day + dt.timedelta(days=n)).isoformat() for n in range(later + 1)]
    since = dt.datetime.combine(day - dt.timedelta(days=1), dt.time.min, tzinfo=dt.UTC)
    names = sorted({name for w in watched.values() for name in w.key})
    announced = (
        Event.objects.filter(type__in=list(watched), occurred_at__gte=since, data__asOf__in=as_of)
        .order_by("id")
        .values_list("type", "data__to", "data__asOf", *(f"data__{name}" for name in names))
    )
    the_day = day.isoformat()
    for type_, to, when, *values in announced:
        w, data = watched[type_], dict(zip(names, values, strict=True))
        key = tuple(data[name] for name in w.key) if len(w.key) > 1 else data[w.key[0]]
        if key not in w.before:
            continue
        if when == the_day:
            state, at = w.before[key], w.announced_at
            w.before[key] = (*state[:at], to, *state[at + 1 :])
        else:  # announced by a later write: the day's change is not news any more
            w.before.pop(key)
            w.after.pop(key, None)
