"""An event's position in the change feed: the order in which the transactions that wrote the
events committed (contract section 14, "oldest first"; docs/webhooks.md).

Ids are taken when a transaction inserts, not when it commits, and on PostgreSQL a
transaction's own id is taken when it first writes or locks a row, before it waits for a lock
another transaction holds: neither orders two writes to the same record that waited on each
other as they were applied. So on PostgreSQL an event is written without a position, and its
transaction gives its events one just before it commits: the next number of a sequence, taken
under one advisory lock held until the commit ends (`_Assignment`, run by the database backend's
`run_before_commit` once every deferred constraint is checked, so no row lock is waited for
while it is held; the commit's own write to disk still is). The transaction that takes a
position commits before the next one can take another, so:

- positions follow commit order, and a write applied after another (it waited for its lock)
  has a later position;
- no event is ever committed with a position lower than one already committed (a transaction
  that took a position and then failed to commit leaves a gap no event fills), so the feed
  shows every committed event at once and never has an event appear behind a cursor;
- an event of the reader's own transaction, not committed yet, has no position (NULL): it
  sorts after every committed one (`PENDING` in its cursor), as it will when it commits.

All of an event's transaction's events share its position and keep their id order within it;
they are found by the ids the transaction wrote, so the time the lock is held does not depend
on anything but them. Event-writing commits are serialised for the time of a commit (a
millisecond or two; a calendar day of 20,000 events, about half a second), writes without
events are not. On SQLite, whose writers are serialised anyway, the id order is the commit
order: every position is 0 and the feed orders by id.

An event written some other way (psql, a data migration with the historical model) commits
without a position: the feed never shows it, and the worker gives it one a minute later
(`strays_position`, logged as a warning), after every event already shown.

Events written before positions existed keep their transaction id as their position (the
migration, 0004), so a cursor given then (transaction id and event id) is still one of this
feed; the sequence starts past every such transaction id.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

# A position no committed event has: an event of the reader's own transaction, until it commits.
PENDING = 2**63 - 1
SEQUENCE = "events_event_position_seq"
# pg_advisory_xact_lock's key for the assignment ("events" in ASCII).
LOCK = 0x6576656E7473
HOOK = "events.position"
# One statement: the transaction's idle timeout (its parameter), the lock, then one number for
# the rows its WHERE names (an uncorrelated subquery is evaluated once, and not at all when no
# row is left: a savepoint rolled back a transaction's events, or no stray is there). The lock
# is held until the commit ends, and nothing but the COMMIT follows this statement: a
# transaction idle for longer than EVENTS_POSITION_IDLE_TIMEOUT_MS here has stalled (its process
# frozen or cut off), and PostgreSQL ends it (idle_in_transaction_session_timeout, for this
# transaction only) rather than hold every other event-writing commit behind it.
_POSITION_THE_ROWS = (
    "WITH idle AS (SELECT set_config('idle_in_transaction_session_timeout', %s, true)), "
    f"locked AS (SELECT pg_advisory_xact_lock({LOCK}) FROM idle) "
    f"UPDATE events_event SET position = (SELECT nextval('{SEQUENCE}') FROM locked) WHERE "
)


def _position(db, where: str, params: list) -> None:
    db.execute(_POSITION_THE_ROWS + where, [str(settings.EVENTS_POSITION_IDLE_TIMEOUT_MS), *params])


class _Assignment:
    """The hook of one transaction: the ids of the events it wrote, positioned at its commit."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    def __call__(self) -> None:
        with connection.cursor() as db:
            _position(db, "id = ANY(%s)", [self.ids])


def at_commit(events) -> None:
    """Have these events of the current transaction positioned when it commits (PostgreSQL);
    an event is always written inside one (apps.events.services)."""
    if connection.vendor != "postgresql":
        return
    hook = connection.before_commit_hook(HOOK)
    if hook is None:
        hook = _Assignment()
        connection.run_before_commit(HOOK, hook)
    hook.ids.extend(event.pk for event in events)


def pending() -> bool:
    """Whether the reader's own transaction wrote events to be positioned at its commit
    (PostgreSQL; a savepoint rolled back since may have taken them away again)."""
    return connection.vendor == "postgresql" and connection.before_commit_hook(HOOK) is not None


def head() -> int:
    """The last position taken (PostgreSQL): no committed event's position is past it."""
    with connection.cursor() as db:
        db.execute(f"SELECT last_value, is_called FROM {SEQUENCE}")
        last, called = db.fetchone()
    return last if called else last - 1


STRAY_AGE = "1 minute"


def strays_position() -> int:
    """Give a position to the events committed without one (written around `event_emit`),
    a minute after they were (an event still being written is not seen by this transaction
    anyway): after every event shown so far, so no reader's cursor passes them. PostgreSQL;
    run by the worker on each beat; how many there were."""
    if connection.vendor != "postgresql":
        return 0
    with connection.cursor() as db:
        _position(db, f"position IS NULL AND occurred_at < now() - interval '{STRAY_AGE}'", [])
        count = db.rowcount
    if count:
        logger.warning("%d events committed without a position were given one", count)
    return count
