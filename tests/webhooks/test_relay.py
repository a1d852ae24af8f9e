"""The worker's delivery loop (apps/webhooks/relay.py): a backlog is claimed in batches and
sent once each, in well under one query per delivery; a slow receiver does not hold up the
other subscriptions; on PostgreSQL two loops share a backlog without sending anything twice."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.events.services import event_emit
from apps.webhooks.models import WebhookDelivery
from apps.webhooks.relay import Relay
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def private_ok(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True


def subscribe(api, receiver, **extra) -> dict:
    response = api.post("/v1/webhooks", {"url": receiver.url, **extra}, format="json")
    assert response.status_code == 201, response.content
    receiver.secret = response.json()["secret"]
    return response.json()


def emit(agency_id: int, n: int, client_id=None) -> list[str]:
    return [
        event_emit(
            type="client.updated", agency_id=agency_id, client_id=client_id, data={"n": k}
        ).public_id
        for k in range(n)
    ]


def drive(relay: Relay, until, timeout: float = 60) -> None:
    """Run the loop's steps in this thread (the test's database connection) until `until()`."""
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, "the relay did not get there in time"
        relay.step(0.05)


def test_backlog_sent_once_in_batches(api, agency, private_ok):
    with Receiver() as receiver:
        hook = subscribe(api, receiver)
        ids = emit(agency.id, 40)
        relay = Relay(threads=4, stop=threading.Event())
        pending = WebhookDelivery.objects.filter(status="pending")
        with CaptureQueriesContext(connection) as queries:
            drive(relay, lambda: relay.inflight == 0 and not pending.exists())
        relay.pool.shutdown()
    assert receiver.rejected == []
    assert sorted(p["id"] for p in receiver.received) == sorted(ids)  # each once
    rows = api.get(f"/v1/webhooks/{hook['id']}/deliveries", {"limit": 100}).json()["results"]
    assert len(rows) == 40
    assert {(r["status"], r["attempts"], r["responseStatus"]) for r in rows} == {
        ("delivered", 1, 204)
    }
    assert all(r["durationMs"] is not None for r in rows)
    # Claims and records in batches (the test's own polling included): far below the five
    # or so statements per delivery of one task per delivery.
    writes = [q for q in queries if not q["sql"].startswith('SELECT 1 AS "a"')]
    assert len(writes) < 40, len(writes)


def test_slow_receiver_does_not_hold_up_the_others(api, agency, private_ok):
    with Receiver(delay=1.5) as slow, Receiver() as fast:
        subscribe(api, slow, description="slow")
        subscribe(api, fast, description="fast")
        ids = emit(agency.id, 8)
        relay = Relay(threads=4, stop=threading.Event())
        started = time.monotonic()
        drive(relay, lambda: len(fast.received) == 8)
        fast_done = time.monotonic() - started
        # Two slots for the slow subscription at most: 8 slow answers take four rounds.
        assert len(slow.received) < 8, (len(slow.received), fast_done)
        drive(relay, lambda: len(slow.received) == 8 and relay.inflight == 0)
        relay.pool.shutdown()
    assert sorted(p["id"] for p in fast.received) == sorted(ids)
    assert sorted(p["id"] for p in slow.received) == sorted(ids)
    assert not WebhookDelivery.objects.exclude(status="delivered").exists()


def test_stopping_gives_back_what_was_not_attempted(api, agency, private_ok):
    with Receiver(delay=0.5) as slow:
        subscribe(api, slow)
        emit(agency.id, 6)
        relay = Relay(threads=2, stop=threading.Event())  # one slot for the subscription
        assert relay.step(0) == 4  # claims four, sends one, keeps three waiting
        deadline = time.monotonic() + 30
        while relay.inflight:
            assert time.monotonic() < deadline
            relay.wind_down(0.05)
        relay.pool.shutdown()
    rows = list(WebhookDelivery.objects.order_by("id").values_list("status", "attempts"))
    assert rows.count(("delivered", 1)) == 1
    # Three given back (no attempt counted), two never claimed.
    assert rows.count(("pending", 0)) == 5
    assert len(slow.received) == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SKIP LOCKED needs PostgreSQL")
def test_two_loops_share_a_backlog_without_double_delivery(
    master_data_back, make_api, groups, settings
):
    from tests.factories import AgencyFactory, UserFactory

    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    agency = AgencyFactory(name="Relay Agency")
    api = make_api(UserFactory(username="relay", agencies=[agency], groups=[groups[0]]))
    with Receiver() as receiver:
        subscribe(api, receiver)
        with transaction.atomic():
            ids = emit(agency.id, 300)
        stop = threading.Event()
        loops = [Relay(threads=4, interval=0.02, stop=stop) for _ in range(2)]
        threads = [threading.Thread(target=loop.run) for loop in loops]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 120
        while len(receiver.received) < 300 and time.monotonic() < deadline:
            time.sleep(0.1)
        stop.set()
        for thread in threads:
            thread.join(30)
    got = [p["id"] for p in receiver.received]
    assert sorted(got) == sorted(ids)  # every one, none twice
    assert WebhookDelivery.objects.filter(status="delivered").count() == 300
