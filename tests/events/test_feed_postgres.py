"""The feed is in commit order, never skips an event whose transaction commits late, nor
repeats one (contract section 14), on PostgreSQL where writers run concurrently (SQLite
serialises them, so id order is commit order there and these tests are skipped).
apps.events.positions tells how."""

from __future__ import annotations

import random
import threading
import time
from contextlib import contextmanager

import pytest
from django.db import connection, transaction

from apps.clients.services import client_update
from apps.events import positions
from apps.events.models import Event
from apps.events.services import event_emit
from apps.webhooks.models import Webhook, WebhookDelivery
from tests.conftest import assert_problem
from tests.events.test_feed_cursor import REFUSED, encode
from tests.factories import AgencyFactory, ClientFactory, UserFactory

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL"
)


def page_all(api, cursor):
    """Read the feed from the cursor to its current end; the events and the next cursor."""
    got = []
    while True:
        body = api.get("/v1/events", {"limit": 2, **({"after": cursor} if cursor else {})}).json()
        got += [e["id"] for e in body["results"]]
        cursor = body["next"]
        if not body["results"]:
            return got, cursor


def in_a_thread(work):
    """Run `work()` on a connection of its own; the thread, and what `work` gave or raised."""
    out = {}

    def run():
        try:
            out["value"] = work()
        except BaseException as exc:  # reported to the test, which asserts on it
            out["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


@contextmanager
def an_event_held(agency):
    """An event written by a transaction of another connection, which commits when the block
    ends; yields where that event will be (`["value"]`) once it has."""
    started, release = threading.Event(), threading.Event()

    def slow_writer():
        with transaction.atomic():
            event = event_emit(
                type="client.updated", agency_id=agency.id, client_id=None, data={"n": 1}
            )
            started.set()
            release.wait(10)
        return event

    thread, out = in_a_thread(slow_writer)
    try:
        assert started.wait(10)
        yield out
    finally:
        release.set()
        thread.join(10)
    assert "error" not in out, out


@pytest.fixture
def feed_api(master_data_back, make_api, groups):
    agency = AgencyFactory(name="Feed Agency")
    user = UserFactory(username="feed", agencies=[agency], groups=[groups[0]])
    return agency, make_api(user)


def test_an_event_committed_late_comes_after_the_cursor_never_behind_it(feed_api):
    """A transaction that wrote first (the lower id) and commits last comes last: the event
    committed meanwhile is shown at once, and the late one after it, not skipped."""
    agency, api = feed_api
    with an_event_held(agency) as early:
        with transaction.atomic():
            late = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
        seen, cursor = page_all(api, None)
        assert seen == [late.public_id]
    assert early["value"].pk < late.pk
    more, cursor = page_all(api, cursor)
    assert more == [early["value"].public_id]
    assert page_all(api, cursor)[0] == []


def test_of_two_writes_to_a_record_the_one_applied_last_comes_last(feed_api):
    """The second writer began first (its transaction id is the older), then waited for the
    first writer's lock on the client: its write is applied second, so its event is the
    client's last in the feed and tells the client's final state (the feed was ordered by
    transaction id, and its last event named the write that was overwritten)."""
    agency, api = feed_api
    manager = UserFactory(username="feed-writer", agencies=[agency])
    carrier = ClientFactory(agency=agency, client_name="Before")
    began, locked = threading.Event(), threading.Event()

    def second_writer():
        with transaction.atomic():
            with connection.cursor() as db:
                db.execute("SELECT txid_current()")  # begins before the first writer
            began.set()
            assert locked.wait(10)
            # Waits for the first writer's lock on the client, then overwrites its write.
            client_update(user=manager, instance=carrier, client_name="Second")

    thread, out = in_a_thread(second_writer)
    try:
        assert began.wait(10)
        with transaction.atomic():
            client_update(user=manager, instance=carrier, client_name="First")
            locked.set()
            time.sleep(0.5)  # the second writer is waiting for the client's lock now
    finally:
        locked.set()
        thread.join(20)
    assert "error" not in out, out
    carrier.refresh_from_db()
    assert carrier.client_name == "Second"
    events = api.get("/v1/events", {"type": "client.updated", "clientId": carrier.pk}).json()
    assert [e["data"]["clientName"] for e in events["results"]] == ["First", "Second"]


def test_a_writer_waiting_on_a_row_lock_at_its_commit_does_not_deadlock(feed_api):
    """A commit takes the feed's position lock only once its deferred constraints are checked.
    A ping holds its subscription locked (FOR UPDATE, apps.webhooks.services) and writes an
    event; a write of the same agency meanwhile writes an event and its delivery to that
    subscription, whose foreign key is checked at the commit. The write waits for the ping
    before it takes the position lock (it was a deadlock: the write holding the position lock
    and waiting for the subscription, the ping holding the subscription and waiting for the
    position lock)."""
    agency, api = feed_api
    webhook = Webhook.objects.create(agency=agency, url="https://example.com/h", secret="whsec_x")
    written = threading.Event()

    def write():
        with transaction.atomic():
            # Fanned out to the subscription: a delivery whose key names it.
            event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
            written.set()

    with transaction.atomic():
        Webhook.objects.select_for_update().get(pk=webhook.pk)
        event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={"n": 1})
        thread, out = in_a_thread(write)
        assert written.wait(10)
        time.sleep(0.5)  # the write's commit is waiting for the subscription now
    thread.join(20)
    assert "error" not in out, out
    assert len(page_all(api, None)[0]) == 2
    assert WebhookDelivery.objects.filter(webhook=webhook).count() == 2


def test_concurrent_writers_and_a_paging_reader(feed_api):
    """Eight writers commit in random order while a reader pages: every event, once."""
    agency, api = feed_api
    written, lock = [], threading.Lock()

    def writer(n):
        rng = random.Random(n)
        try:
            for i in range(6):
                with transaction.atomic():
                    event = event_emit(
                        type="client.updated",
                        agency_id=agency.id,
                        client_id=None,
                        data={"w": n, "i": i},
                    )
                    time.sleep(rng.random() * 0.05)
                with lock:
                    written.append(event.public_id)
        finally:
            connection.close()

    writers = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in writers:
        thread.start()
    seen, cursor = [], None
    while any(t.is_alive() for t in writers):
        got, cursor = page_all(api, cursor)
        seen += got
        time.sleep(0.01)
    for thread in writers:
        thread.join()
    got, cursor = page_all(api, cursor)
    seen += got
    assert len(seen) == len(set(seen)) == 48
    assert set(seen) == set(written)


def test_a_cursor_past_the_head_is_refused_and_a_given_one_never(feed_api):
    """Every cursor the feed gives is a committed event's position, at most the last position
    taken: one past it is a position the feed could not have given (400), also while a
    transaction holds events uncommitted; the cursor it gave keeps answering, and the held
    events come after it once they commit."""
    agency, api = feed_api
    first = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
    seen, given = page_all(api, None)
    assert seen == [first.public_id]
    with an_event_held(agency) as held:
        position = Event.objects.get(pk=first.pk).position
        past = encode(position + 1, first.pk)
        assert api.get("/v1/events", {"after": given}).json() == {"results": [], "next": given}
        assert assert_problem(api.get("/v1/events", {"after": past}), 400) == REFUSED
    more, head = page_all(api, given)
    assert more == [held["value"].public_id]
    # The held event's commit took that position: a cursor of it is one of the feed's now.
    assert page_all(api, past)[0] == [held["value"].public_id]


def test_the_upgrade_keeps_the_order_and_every_cursor_given_before(feed_api):
    """Migration 0004: the events kept take their transaction id as their position, so a cursor
    given before (a transaction id and an event id) still continues where it stopped, and the
    events written after the upgrade come after every one of them. Back, the other way."""
    from django.db.migrations.executor import MigrationExecutor

    agency, api = feed_api
    before, latest = (
        [("events", "0003_expiring_marks_name_their_notice")],
        [("events", "0004_events_ordered_by_commit")],
    )
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        with connection.cursor() as db:
            for n in range(3):  # three transactions of the previous release
                with transaction.atomic():
                    db.execute(
                        "INSERT INTO events_event (type, agency_id, data, occurred_at) "
                        "VALUES ('client.updated', %s, %s, now()) RETURNING id, txid",
                        [agency.id, f'{{"n": {n}}}'],
                    )
                    if n == 0:
                        first_id, first_txid = db.fetchone()
    finally:
        MigrationExecutor(connection).migrate(latest)
    given_then = encode(first_txid, first_id)  # the cursor the feed gave after the first
    new = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={"n": 3})

    body = api.get("/v1/events", {"after": given_then}).json()
    assert [e["data"]["n"] for e in body["results"]] == [1, 2, 3]
    assert body["results"][-1]["id"] == new.public_id
    assert [e["data"]["n"] for e in api.get("/v1/events").json()["results"]] == [0, 1, 2, 3]
    assert Event.objects.get(pk=first_id).position == first_txid

    MigrationExecutor(connection).migrate(before)
    try:
        with connection.cursor() as db:
            db.execute("SELECT data->>'n' FROM events_event ORDER BY txid, id")
            assert [int(n) for (n,) in db.fetchall()] == [0, 1, 2, 3]
    finally:
        MigrationExecutor(connection).migrate(latest)


def test_an_event_written_around_event_emit_is_shown_once_the_worker_positions_it(feed_api):
    """An event committed without a position (psql, a data migration) is shown to no reader,
    with or without a cursor (it showed last, with a cursor that the next commit made a 400);
    the worker's beat gives it one a minute later, after every event shown, so a reader's
    cursor still gets it."""
    agency, api = feed_api
    first = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={"n": 0})
    with connection.cursor() as db:
        db.execute(
            "INSERT INTO events_event (type, agency_id, data, occurred_at) VALUES "
            "('client.updated', %s, '{\"n\": 1}', now() - interval '2 minutes') RETURNING id",
            [agency.id],
        )
        (stray,) = db.fetchone()
    seen, cursor = page_all(api, None)
    assert seen == [first.public_id]
    second = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
    more, cursor = page_all(api, cursor)
    assert more == [second.public_id]

    assert positions.strays_position() == 1
    assert page_all(api, cursor)[0] == [f"evt_{stray}"]
    assert positions.strays_position() == 0


def test_events_of_a_savepoint_rolled_back_leave_the_rest_positioned(feed_api):
    agency, api = feed_api
    with transaction.atomic():
        kept = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
        with pytest.raises(RuntimeError), transaction.atomic():
            event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
            raise RuntimeError
    assert page_all(api, None)[0] == [kept.public_id]
    assert Event.objects.get(pk=kept.pk).position is not None


def test_a_transaction_stalled_after_taking_its_position_gives_the_lock_back(feed_api, settings):
    """The feed's lock is held from a transaction's position to its commit. A process that stops
    in between (frozen, cut off) would hold every other event-writing commit behind it until TCP
    noticed: PostgreSQL ends such a transaction once it has been idle for
    EVENTS_POSITION_IDLE_TIMEOUT_MS, so the others go on and the stalled one writes nothing."""
    agency, _ = feed_api
    settings.EVENTS_POSITION_IDLE_TIMEOUT_MS = 200
    positioned, release = threading.Event(), threading.Event()

    def stalled_writer():
        with transaction.atomic():
            event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
            connection.before_commit_hook(positions.HOOK)()  # the lock is held from here
            positioned.set()
            release.wait(10)  # stalled before COMMIT

    thread, out = in_a_thread(stalled_writer)
    try:
        assert positioned.wait(10)
        time.sleep(1)
        with transaction.atomic(), connection.cursor() as db:
            db.execute("SELECT pg_try_advisory_xact_lock(%s)", [positions.LOCK])
            assert db.fetchone()[0] is True
    finally:
        release.set()
        thread.join(10)
    assert "error" in out  # its session was ended: the commit failed, nothing was written
    assert not Event.objects.filter(agency=agency).exists()
