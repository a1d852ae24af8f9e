"""One attempt lasts at most the timeout, the answer's read included: a receiver that answers
its headers at once and then trickles its body a byte at a time is cut at the deadline, and the
attempt counts as a timeout (retried later). The relay never claims again a delivery it still
has in flight, even when the attempt outlives its lease."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from apps.events.services import event_emit
from apps.webhooks import delivery
from apps.webhooks.relay import Relay

pytestmark = pytest.mark.django_db


class TrickleReceiver:
    """Answers each request `200` with 12 announced bytes at once, then one byte every `every`
    seconds; records when each request arrived and how many were open at the same time."""

    def __init__(self, every: float):
        self.every = every
        self.requests: list[float] = []
        self.open = 0
        self.most_open = 0
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        with conn:
            try:
                request = b""
                while b"\r\n\r\n" not in request:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    request += chunk
                with self.lock:
                    self.requests.append(time.monotonic())
                    self.open += 1
                    self.most_open = max(self.most_open, self.open)
                try:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n")
                    for _ in range(12):
                        time.sleep(self.every)
                        conn.sendall(b"x")
                finally:
                    with self.lock:
                        self.open -= 1
            except OSError:  # the caller gave up and closed the connection
                return

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def short_times(settings, monkeypatch):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(delivery, "TIMEOUT_SECONDS", 1.0)
    # A lease shorter than the attempt: the relay must not take its own delivery again.
    settings.WEBHOOK_LEASE_SECONDS = 0.3


def test_a_trickling_answer_ends_the_attempt_at_the_timeout(api, agency, short_times):
    receiver = TrickleReceiver(every=0.4)  # each read well within the timeout; all 4.8 s
    try:
        response = api.post("/v1/webhooks", {"url": receiver.url}, format="json")
        assert response.status_code == 201, response.content
        hook = response.json()
        event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
        relay = Relay(threads=4, stop=threading.Event())  # two slots for the subscription
        started = time.monotonic()
        relay.step(0)
        while relay.inflight:
            assert time.monotonic() - started < 10, "the attempt never ended"
            relay.step(0.05)
        elapsed = time.monotonic() - started
        relay.pool.shutdown()
    finally:
        receiver.close()
    assert 0.9 < elapsed < 2.5, elapsed  # the 1 s deadline, not the 4.8 s of the answer
    assert len(receiver.requests) == 1  # not sent again while in flight
    assert receiver.most_open == 1
    rows = api.get(f"/v1/webhooks/{hook['id']}/deliveries").json()["results"]
    assert len(rows) == 1
    row = rows[0]
    assert (row["status"], row["attempts"], row["responseStatus"]) == ("pending", 1, None)
    assert row["nextAttemptAt"] is not None  # a timeout: retried later
