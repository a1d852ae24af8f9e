"""An event's position in the change feed: the order in which the transactions that wrote the
events committed (contract section 14, "oldest first"; docs/webhooks.md).

Ids are taken when a transaction inserts, not when it commits, and on PostgreSQL a
transaction's own id is taken when it first writes or locks a row, before it waits for a lock
another transaction holds: neither orders two writes to the same record that waited on each
other as they were applied. So on PostgreSQL an event is written without a position, and its
transaction takes one just before it commits, the next number of a sequence, under one
advisory lock held until the commit ends (`assign`, run by the database backend's
`run_before_commit` after every deferred constraint was checked, so nothing more is waited for
while it is held). The transaction that takes a position commits before the next one can take
another, so:

- positions follow commit order, and a write applied after another (it waited for its lock)
  has a later position;
- no event is ever committed with a position lower than one already committed (a transaction
  that took a position and then failed to commit leaves a gap no event fills), so the feed
  shows every committed event at once and never has an event appear behind a cursor;
- an event of the reader's own transaction, not committed yet, has no position (NULL): it
  sorts after every committed one (`PENDING` in its cursor), as it will when it commits.

All of an event's transaction's events share its position and keep their id order within it.
Event-writing commits are serialised for the few milliseconds of a commit, writes without
events are not. On SQLite, whose writers are serialised anyway, the id order is the commit
order: every position is 0 and the feed orders by id.

Events written before positions existed keep their transaction id as their position (the
migration, 0004), so a cursor given then (transaction id and event id) is still one of this
feed; the sequence starts past every such transaction id.
"""

from __future__ import annotations

from django.db import connection

# A position no committed event has: an event of the reader's own transaction, until it commits.
PENDING = 2**63 - 1
SEQUENCE = "events_event_position_seq"
# pg_advisory_xact_lock's key for the assignment ("events" in ASCII).
LOCK = 0x6576656E7473
HOOK = "events.position"


def assign() -> None:
    """Give this transaction's events the next position (PostgreSQL, just before the commit)."""
    with connection.cursor() as db:
        db.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK])
        # One number for the transaction (an uncorrelated subquery is evaluated once); the
        # rows without a position are this transaction's (another's are not visible to it).
        db.execute(
            f"UPDATE events_event SET position = (SELECT nextval('{SEQUENCE}')) "
            "WHERE position IS NULL"
        )


def at_commit() -> None:
    """Have the current transaction's events positioned when it commits (once per
    transaction); an event is always written inside one (apps.events.services)."""
    if connection.vendor == "postgresql":
        connection.run_before_commit(HOOK, assign)


def pending() -> bool:
    """Whether the reader's own transaction wrote events it has not committed (PostgreSQL)."""
    return connection.vendor == "postgresql" and connection.before_commit_registered(HOOK)


def head() -> int:
    """The last position taken (PostgreSQL): no committed event's position is past it."""
    with connection.cursor() as db:
        db.execute(f"SELECT last_value, is_called FROM {SEQUENCE}")
        last, called = db.fetchone()
    return last if called else last - 1
