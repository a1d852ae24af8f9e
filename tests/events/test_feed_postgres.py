"""The feed never skips an event whose transaction commits late, nor repeats one
(contract section 14), on PostgreSQL where writers run concurrently (SQLite serialises them,
so id order is commit order there and this test is skipped)."""

from __future__ import annotations

import random
import threading
import time

import pytest
from django.db import connection, transaction

from apps.events.models import Event
from apps.events.services import event_emit
from tests.conftest import assert_problem
from tests.events.test_feed_cursor import REFUSED, encode
from tests.factories import AgencyFactory, UserFactory

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


def page_until(api, cursor, count: int, seconds: float = 30):
    """`page_all` until `count` events have come (or `seconds` have passed). The feed holds back
    every event while an older transaction anywhere on the server runs, another test's on
    another database too (transaction ids are the cluster's): such a test of the suite's other
    worker, holding one open a second, delays these events, never loses them."""
    got, deadline = [], time.monotonic() + seconds
    while True:
        more, cursor = page_all(api, cursor)
        got += more
        if len(got) >= count or time.monotonic() > deadline:
            return got, cursor
        time.sleep(0.05)


@pytest.fixture
def feed_api(master_data_back, make_api, groups):
    agency = AgencyFactory(name="Feed Agency")
    user = UserFactory(username="feed", agencies=[agency], groups=[groups[0]])
    return agency, make_api(user)


def test_late_commit_is_not_skipped(feed_api):
    agency, api = feed_api
    started, release = threading.Event(), threading.Event()
    early = {}

    def slow_writer():
        try:
            with transaction.atomic():
                # The first event written: the lowest id, but its transaction commits last.
                early["event"] = event_emit(
                    type="client.updated", agency_id=agency.id, client_id=None, data={"n": 1}
                )
                started.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=slow_writer)
    thread.start()
    assert started.wait(10)
    with transaction.atomic():
        late = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
    assert late.pk > early["event"].pk
    seen, cursor = page_all(api, None)
    # The committed event waits behind the running transaction instead of passing it.
    assert seen == []
    release.set()
    thread.join(10)
    more, cursor = page_until(api, cursor, 2)
    assert more == [early["event"].public_id, late.public_id]
    assert page_all(api, cursor)[0] == []


def test_concurrent_writers_and_a_paging_reader(feed_api):
    """Eight writers commit in random order while a reader pages: every event, once."""
    agency, api = feed_api
    written, lock, done = [], threading.Lock(), threading.Event()

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
    done.set()
    got, cursor = page_until(api, cursor, 48 - len(seen))
    seen += got
    assert len(seen) == len(set(seen)) == 48
    assert set(seen) == set(written)


def test_a_cursor_at_the_horizon_is_refused_and_a_given_one_never(feed_api):
    """The feed shows events of transactions below the horizon (the oldest one running), so
    every cursor it gives is below it: one naming a transaction at or above it, a committed
    one's included, is a position it could not have given (400); the cursor it gave before an
    old transaction held the horizon back keeps answering."""
    agency, api = feed_api
    first = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
    seen, given = page_until(api, None, 1)
    assert seen == [first.public_id]
    started, release = threading.Event(), threading.Event()
    held = {}

    def slow_writer():
        try:
            with transaction.atomic():
                held["event"] = event_emit(
                    type="client.updated", agency_id=agency.id, client_id=None, data={"n": 1}
                )
                started.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=slow_writer)
    thread.start()
    try:
        assert started.wait(10)
        with transaction.atomic():
            late = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
        late_position = encode(Event.objects.get(pk=late.pk).txid, late.pk)

        assert api.get("/v1/events", {"after": given}).json() == {"results": [], "next": given}
        refused = api.get("/v1/events", {"after": late_position})
        assert assert_problem(refused, 400) == REFUSED
    finally:
        release.set()
        thread.join(10)
    more, _ = page_until(api, given, 2)
    assert more == [held["event"].public_id, late.public_id]
    # Below the horizon now: the position the feed gives after the late event.
    after_late = api.get("/v1/events", {"after": late_position})
    assert after_late.json() == {"results": [], "next": late_position}
