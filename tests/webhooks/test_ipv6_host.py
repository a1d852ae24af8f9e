"""A subscription URL with an IPv6 literal is sent `Host: [addr]:port`, the bracketed form a
receiver (and any HTTP server's virtual hosting) parses, as the URL spells it."""

from __future__ import annotations

import socket
import threading

import pytest

from apps.webhooks import delivery
from apps.webhooks.delivery import delivery_send
from tests.webhooks.test_answer_read import job


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_an_ipv6_literal_is_sent_bracketed_in_host(settings, monkeypatch):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(delivery, "TIMEOUT_SECONDS", 2.0)
    listener = socket.create_server(("::1", 0), family=socket.AF_INET6)
    port = listener.getsockname()[1]
    heads: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            heads.append(request.partition(b"\r\n\r\n")[0])
            conn.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        outcome = delivery_send(job(f"http://[::1]:{port}/hook"))
        thread.join(5)
    finally:
        listener.close()
    assert (outcome.status_code, outcome.error) == (204, "")
    lines = heads[0].decode().split("\r\n")
    assert [line.lower() for line in lines if line.lower().startswith("host:")] == [
        f"host: [::1]:{port}"
    ]
