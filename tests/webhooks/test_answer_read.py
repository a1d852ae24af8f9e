"""The relay keeps the first 2,000 bytes of a receiver's answer and reads no more: an answer of
megabytes, or one that never ends, costs no more than a short one, and its connection is closed
rather than reused; a short answer read to its end leaves the connection open for the next."""

from __future__ import annotations

import datetime as dt
import socket
import threading
import time

import pytest

from apps.webhooks import delivery
from apps.webhooks.delivery import Job, delivery_send

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"


class RawReceiver:
    """Answers every request with `length` announced bytes of which it sends `sent` ("x"), then
    waits; records its connections and whether the caller closed them."""

    def __init__(self, length: int, sent: int):
        self.length, self.sent = length, sent
        self.connections = 0
        self.closed_by_caller = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            conn, _ = self.listener.accept()
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        with conn:
            try:
                while True:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        chunk = conn.recv(65536)
                        if not chunk:
                            self.closed_by_caller.set()
                            return
                        request += chunk
                    head, _, body = request.partition(b"\r\n\r\n")
                    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                    while len(body) < length:
                        body += conn.recv(65536)
                    conn.sendall(HEAD % self.length + b"x" * self.sent)
            except ConnectionResetError:  # closed with the answer unread: a reset, not a FIN
                self.closed_by_caller.set()
            except (TimeoutError, OSError):
                return


def job(url: str) -> Job:
    return Job(
        id=1,
        attempts=0,
        created_at=dt.datetime.now(dt.UTC),
        webhook_id=1,
        url=url,
        active=True,
        secrets=("whsec_" + "A" * 32,),
        msg_id="msg_1",
        event_type="client.updated",
        body='{"type": "client.updated"}',
    )


@pytest.fixture
def quick(settings, monkeypatch):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(delivery, "TIMEOUT_SECONDS", 2.0)


def test_an_answer_that_never_ends_is_cut_at_what_is_kept(quick):
    receiver = RawReceiver(length=100_000_000, sent=50_000)  # 100 MB announced, then silence
    started = time.monotonic()
    outcome = delivery_send(job(receiver.url))
    assert (outcome.status_code, outcome.error) == (200, "")  # not a 2 s read timeout
    assert outcome.text == "x" * 500
    assert time.monotonic() - started < 1.5
    assert receiver.closed_by_caller.wait(2)  # the connection is not left half read


def test_a_short_answer_leaves_the_connection_for_the_next_delivery(quick):
    receiver = RawReceiver(length=20, sent=20)
    outcomes = [delivery_send(job(receiver.url)) for _ in range(3)]
    assert [(o.status_code, o.text) for o in outcomes] == [(200, "x" * 20)] * 3
    assert receiver.connections == 1
    assert not receiver.closed_by_caller.is_set()
