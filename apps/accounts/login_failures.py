"""Failed-login throttling per user name and per client address, kept in the shared cache."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.exceptions import Throttled


def _keys(username: str, address: str) -> list[tuple[str, int]]:
    return [
        (f"login-fail:user:{username.strip().lower()[:150]}", settings.LOGIN_FAILURES_PER_USER),
        (f"login-fail:addr:{address}", settings.LOGIN_FAILURES_PER_ADDRESS),
    ]


def client_address(request) -> str:
    """The address failed logins are counted against.

    `X-Forwarded-For` is written by the client unless a proxy we run overwrote or appended to
    it, so only the last `TRUSTED_PROXY_COUNT` hops (the ones our proxies added) are believed;
    with the default 0 the header is ignored and the socket's peer address is used. Trusting
    the whole header let an attacker pick a fresh "address" after every 20 failures.
    """
    remote = request.META.get("REMOTE_ADDR", "") or "unknown"
    trusted = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0)
    if trusted <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [hop for hop in hops if hop]
    if not hops:
        return remote
    # Our proxies appended the last `trusted` entries; the one they saw is the client.
    return hops[-min(trusted, len(hops))]


def check_login_allowed(*, username: str, address: str) -> None:
    """Raise 429 while either counter is at its limit."""
    now = time.time()
    for key, limit in _keys(username, address):
        entry = cache.get(key)
        if entry and entry["count"] >= limit:
            wait = max(1, int(entry["reset_at"] - now))
            raise Throttled(wait=wait, detail="Too many failed logins; try again later.")


def record_login_failure(*, username: str, address: str) -> None:
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    now = time.time()
    for key, _limit in _keys(username, address):
        # add() is atomic in every backend; the window starts at the first failure.
        cache.add(key, {"count": 0, "reset_at": now + window}, window)
        entry = cache.get(key) or {"count": 0, "reset_at": now + window}
        entry["count"] += 1
        cache.set(key, entry, max(1, int(entry["reset_at"] - now)))


def clear_login_failures(*, username: str) -> None:
    cache.delete(_keys(username, "-")[0][0])
