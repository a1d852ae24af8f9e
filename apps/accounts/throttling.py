"""Failed-login throttling per user name and per client address, kept in the shared cache."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.exceptions import Throttled
from rest_framework.throttling import BaseThrottle


def _keys(username: str, address: str) -> list[tuple[str, int]]:
    return [
        (f"login-fail:user:{username.strip().lower()[:150]}", settings.LOGIN_FAILURES_PER_USER),
        (f"login-fail:addr:{address}", settings.LOGIN_FAILURES_PER_ADDRESS),
    ]


def client_address(request) -> str:
    return BaseThrottle().get_ident(request)


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
