"""A tiny HTTP client for benchmarks against a running server (standard library only)."""

from __future__ import annotations

import http.client
import json
import socket
import statistics
import time
from urllib.parse import urlsplit


class _Connection(http.client.HTTPConnection):
    def connect(self):
        super().connect()
        # Without this, small requests wait on delayed ACKs (about 40 ms each).
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Api:
    """Calls the API with the demo credentials."""

    def __init__(self, base: str, api_key: str = "demo-api-key"):
        parts = urlsplit(base)
        self.host, self.port = parts.hostname, parts.port or 80
        self.headers = {"apiKey": api_key}

    def login(self, username: str = "demo-admin", password: str = "demo-password") -> None:
        status, body = self.call(
            "POST", "/v1/auth/token", {"username": username, "password": password}
        )
        assert status == 200, body
        self.headers["Authorization"] = f"Bearer {json.loads(body)['access']}"

    def call(self, method: str, path: str, body=None, headers=None) -> tuple[int, bytes]:
        all_headers = {**self.headers, **(headers or {})}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        # A connection per request: servers that write headers and body separately would
        # otherwise stall a kept-alive connection on delayed ACKs, measuring TCP, not Django.
        conn = _Connection(self.host, self.port, timeout=60)
        try:
            conn.request(method, path, body=payload, headers={**all_headers, "Connection": "close"})
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()


def interleaved(cases: dict, rounds: int, warmup: int = 3) -> dict[str, float]:
    """Run each case once per round, in turn, and return the median seconds of each."""
    for _ in range(warmup):
        for fn in cases.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def print_table(medians: dict[str, float], baseline: str, targets: dict[str, float]) -> None:
    base = medians[baseline]
    print(f"{'case':<34}{'median ms':>11}{'ratio':>9}{'target':>9}  verdict")
    for name, value in medians.items():
        ratio = value / base
        target = targets.get(name)
        verdict = "" if target is None else ("met" if ratio <= target else "NOT met")
        shown = f"{target:>9.1f}" if target else f"{'':>9}"
        print(f"{name:<34}{value * 1000:>11.2f}{ratio:>9.2f}{shown}  {verdict}")
