"""Reads of events: the change feed (contract section 14), and what a daily comparison of
states has already announced."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from typing import NamedTuple

from django.db import connection
from django.db.models import Q

from apps.core.dates import today
from apps.events import positions
from apps.events.models import Event

# Event types sent to one subscription only, never in the feed: no change of an agency's
# records (a ping names a subscription, which the feed's readers may not see).
NOT_IN_FEED = frozenset({"webhook.ping"})


class BadCursor(ValueError):
    """The `after` value is not a cursor this feed gave out."""


class Cursor(NamedTuple):
    """The event a page ends with (its position and id), and the cursor as the caller sent it
    (the next page's `next` when nothing follows it)."""

    position: int
    pk: int
    text: str


def _spelt(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def cursor_encode(event: Event) -> str:
    position = positions.PENDING if event.position is None else event.position
    return _spelt(f"{position}.{event.pk}")


def cursor_decode(raw: str) -> Cursor:
    """The position `raw` spells, as `cursor_encode` spells it (or with base64's own padding)
    and only so: the decoder drops characters outside its alphabet and ignores unused bits, so
    what it gives is encoded again and compared (`MC41!!` and `MC41===` are not `0.5`)."""
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("ascii")
        position, pk = text.split(".")
        if not (position.isdigit() and pk.isdigit()) or len(position) > 19 or len(pk) > 19:
            raise ValueError
        spelt = _spelt(text)
        if raw not in (spelt, spelt + "=" * (-len(spelt) % 4)):
            raise ValueError
        return Cursor(int(position), int(pk), raw)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadCursor("Not a cursor of this feed.") from None


def _after(cursor: Cursor) -> Q:
    """The events after the cursor in the feed's order, (position, id) with an event of the
    reader's own transaction (no position yet) after every committed one; the position's lower
    bound stands alone, where the feed's index (agency, position, id) starts its scan."""
    if cursor.position > positions.PENDING:  # past every event, pending ones too
        return Q(pk__in=[])
    if cursor.position == positions.PENDING:
        return Q(position__isnull=True, pk__gt=cursor.pk)
    later = Q(position__gte=cursor.position) & (
        Q(position__gt=cursor.position) | Q(pk__gt=cursor.pk)
    )
    return later | Q(position__isnull=True) if positions.pending() else later


def event_feed(
    *,
    user,
    after: Cursor | None,
    limit: int,
    types: list[str] | None = None,
    client_id: int | None = None,
) -> list[Event]:
    """The caller's agencies' events after the cursor (but those NOT_IN_FEED), in the order
    their transactions committed (apps.events.positions), then by id: every committed event
    at once, never one behind a cursor, and the reader's own transaction's uncommitted events
    last (they will commit after every event committed so far).

    A cursor past the feed's head (`given_by_this_feed`) is a BadCursor: its caller would get
    nothing, new events included, and be told nothing."""
    events = Event.objects.for_user(user).exclude(type__in=NOT_IN_FEED)
    if after is not None:
        events = events.filter(_after(after))
    elif not positions.pending():  # no event of another transaction is shown unpositioned
        events = events.filter(position__isnull=False)
    if types:
        events = events.filter(type__in=types)
    if client_id is not None:
        events = events.filter(client_id=client_id)
    # Ascending positions leave NULL (uncommitted) last on PostgreSQL; SQLite has none.
    page = list(events.order_by("position", "id")[:limit])
    # A cursor past the head never has a page after it: only an empty page asks.
    if not page and after is not None and not given_by_this_feed(after):
        raise BadCursor("Not a cursor of this feed.")
    return page


def given_by_this_feed(cursor: Cursor) -> bool:
    """Whether the feed could have given this cursor: a position no later than its head, kept
    events or not. A cursor is the (position, id) of an event a page showed, or one sent back
    and echoed by an empty page, and the head only moves on, so a cursor once given stays good:

    - PostgreSQL: a committed event's position is at most the last one taken
      (`positions.head`); its id is not checked, every later event has a later position. An
      event of the reader's own uncommitted transaction (`PENDING`) only while it has some.
    - SQLite: every event's position is 0, and an id is never given twice (AUTOINCREMENT): the
      id is at most the last one given (`sqlite_sequence`), whether or not that event is still
      kept.

    One query (none for a position SQLite never writes); other databases are not checked."""
    if connection.vendor == "postgresql":
        if cursor.position == positions.PENDING:
            return positions.pending()
        return cursor.position <= positions.head()
    if connection.vendor == "sqlite":
        if cursor.position != 0:
            return False
        # The head is read and compared here: a cursor's id may pass what a column holds.
        with connection.cursor() as db:
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
        .order_by("position", "id")  # the feed's order: the order of the commits
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
