"""Failed-login throttling per user name and per client address, kept in the shared cache.

Every attempt is counted before its password is checked, atomically on each cache back-end
(apps.core.shared_counters), and an attempt counted past either limit is refused (429 with
Retry-After) without checking its password: at most LOGIN_FAILURES_PER_USER passwords of a user
name are checked in a window, however many arrive at once. Counted after the check, as before,
a burst of guesses all passed the check of a count none had written yet.

Every login of the service is checked through `counted_login`, the API's (POST /v1/auth/token)
and the back-office's (/admin/login/) alike: one count per user name and per address for both,
so failures at either door hold both back.

Only failures stay counted, as before. A refused attempt takes its counts back. A success takes
back its own count from the address, and from the user name the attempts counted up to its own
(the failures before it); attempts counted after it (a burst still arriving) keep their places,
so a success cannot hand a burst a fresh limit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from rest_framework.exceptions import Throttled

from apps.core.shared_counters import count_hits, forget_hits

Checked = TypeVar("Checked")


def _user_key(username: str) -> str:
    """The user name as the login looks it up, exactly: user names are case-sensitive, so
    folding case let the owner of `VICTIM` clear the failures counted against `victim` by
    logging in. Hashed, so any user name makes a key every cache back-end takes."""
    digest = hashlib.sha256(username.strip().encode("utf-8", "surrogatepass")).hexdigest()
    return f"login-attempts:user:{digest}"


def _address_key(address: str) -> str:
    return f"login-attempts:addr:{address}"


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


def count_login_attempt(*, username: str, address: str) -> int:
    """Count an attempt against the user name and the address, before its password is checked;
    raise 429 when either count is past its limit. The attempt's place in the user name's
    count, for `forget_login_failures` after a success."""
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    user_key, address_key = _user_key(username), _address_key(address)
    (user_count, user_left), (address_count, address_left) = count_hits(
        [(user_key, window), (address_key, window)]
    )
    waits = [
        left
        for count, left, limit in (
            (user_count, user_left, settings.LOGIN_FAILURES_PER_USER),
            (address_count, address_left, settings.LOGIN_FAILURES_PER_ADDRESS),
        )
        if count > limit
    ]
    if waits:
        # Refused unchecked, so no failure: its counts are taken back (the address of a user
        # who keeps trying a locked name is not locked by it).
        forget_hits(user_key, 1)
        forget_hits(address_key, 1)
        raise Throttled(wait=max(waits), detail="Too many failed logins; try again later.")
    return user_count


def forget_login_failures(*, username: str, address: str, place: int) -> None:
    """After a success counted at `place`: the user name's failures before it are forgotten,
    and the success itself counts against neither the user name nor the address."""
    forget_hits(_user_key(username), place)
    forget_hits(_address_key(address), 1)


def counted_login(*, request, username: str, check: Callable[[], Checked]) -> Checked:
    """Run a login's password `check` as an attempt counted against `username` and the
    request's client address (`client_address`): refused with Throttled (429), unchecked, past
    either limit; a failure (`check` raises) stays counted; a success forgets as
    `forget_login_failures` says. What `check` returns."""
    address = client_address(request)
    place = count_login_attempt(username=username, address=address)
    checked = check()
    forget_login_failures(username=username, address=address, place=place)
    return checked
