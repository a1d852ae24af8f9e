"""The benchmarks' HTTP client against a running server: httpx, with the demo credentials."""

from __future__ import annotations

import json
import socket
import statistics
import time

import httpx

# Without TCP_NODELAY, small requests wait on delayed ACKs (about 40 ms each).
_NO_DELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


class Api:
    """Calls the API with the demo credentials."""

    def __init__(self, base: str, api_key: str = "demo-api-key"):
        self.base = base.rstrip("/")
        self.headers = {"apiKey": api_key}

    def login(self, username: str = "demo-admin", password: str = "demo-password") -> None:
        status, body = self.call(
            "POST", "/v1/auth/token", {"username": username, "password": password}
        )
        assert status == 200, body
        self.headers["Authorization"] = f"Bearer {json.loads(body)['access']}"

    def call(self, method: str, path: str, body=None, headers=None) -> tuple[int, bytes]:
        response = self.request(method, path, body, headers)
        return response.status_code, response.content

    def request(
        self, method: str, path: str, body=None, headers=None, content=None, timeout=60
    ) -> httpx.Response:
        """`body` is sent as JSON, `content` (bytes or an iterator of them) as it is."""
        # A connection per request: servers that write headers and body separately would
        # otherwise stall a kept-alive connection on delayed ACKs, measuring TCP, not Django.
        transport = httpx.HTTPTransport(socket_options=_NO_DELAY)
        with httpx.Client(transport=transport, timeout=timeout) as client:
            return client.request(
                method,
                self.base + path,
                json=body,
                content=content,
                headers={**self.headers, **(headers or {}), "Connection": "close"},
            )


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
