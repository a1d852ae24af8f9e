"""Sending one delivery: SSRF guard with the resolved address pinned, Standard Webhooks
signature, 10 s timeout, retries with exponential backoff and jitter for 72 hours."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import random
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from standardwebhooks.webhooks import Webhook as Signer

from apps.webhooks.models import DeliveryStatus, Webhook, WebhookDelivery

TIMEOUT_SECONDS = 10.0
# A worker holds a delivery this long: longer than any attempt (the 10 s timeout).
LEASE = dt.timedelta(seconds=60)
RETRY_WINDOW = dt.timedelta(hours=72)
FIRST_RETRY_SECONDS = 10.0
MAX_RETRY_SECONDS = 3600.0
# Every delivery and retry is queued as a task; the sweep only catches what a task did not
# send: an attempt abandoned by a killed worker (its lease lapsed) or a delivery this late
# (a lost queue row).
LOST_AFTER = dt.timedelta(minutes=10)


class TargetRefused(Exception):
    """The URL may not be called (scheme, unresolvable host, or a private address)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    address: str  # the resolved IP the connection is pinned to


def _private(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


def target_check(url: str) -> Target:
    """Resolve the URL's host once; refuse it when any address is private, loopback,
    link-local or multicast (unless WEBHOOK_ALLOW_PRIVATE_TARGETS); the caller connects to
    the returned address, so a second resolution cannot swap in another one."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetRefused("The URL must be http:// or https:// with a host.")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise TargetRefused(f"The host {parts.hostname} does not resolve.") from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise TargetRefused(f"The host {parts.hostname} does not resolve.")
    if not settings.WEBHOOK_ALLOW_PRIVATE_TARGETS and any(_private(a) for a in addresses):
        raise TargetRefused(
            "The host resolves to a private, loopback, link-local or multicast address."
        )
    return Target(parts.scheme, parts.hostname, port, addresses[0])


def signature_headers(*, secrets: list[str], msg_id: str, when: dt.datetime, body: str) -> dict:
    """The Standard Webhooks headers; every secret signs (space-separated) during a rotation."""
    signatures = " ".join(Signer(secret).sign(msg_id, when, body) for secret in secrets)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(when.timestamp())),
        "webhook-signature": signatures,
        "content-type": "application/json",
        "user-agent": "coverage-webhooks/1.0",
    }


def _post(url: str, target: Target, headers: dict, body: str) -> httpx.Response:
    """POST to the pinned address, with the name in Host and in the TLS SNI."""
    parts = urlsplit(url)
    literal = f"[{target.address}]" if ":" in target.address else target.address
    pinned = parts._replace(netloc=f"{literal}:{target.port}").geturl()
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    return _client_for(target).post(
        pinned,
        content=body.encode(),
        headers={**headers, "host": host},
        extensions={"sni_hostname": target.host},
    )


_clients = threading.local()


def _client_for(target: Target) -> httpx.Client:
    """One keep-alive client per thread and (address, port, name): building an SSL context per
    request cost more than the request, and a connection is never reused for another name."""
    pool = getattr(_clients, "pool", None)
    if pool is None:
        pool = _clients.pool = {}
    key = (target.scheme, target.address, target.port, target.host)
    client = pool.get(key)
    if client is None:
        if len(pool) > 100:
            for old in pool.values():
                old.close()
            pool.clear()
        client = pool[key] = httpx.Client(
            timeout=TIMEOUT_SECONDS, follow_redirects=False, trust_env=False
        )
    return client


def retry_delay(attempts: int) -> float:
    """Seconds before the next attempt: doubling from 10 s, at most an hour, with jitter."""
    base = min(FIRST_RETRY_SECONDS * 2 ** max(attempts - 1, 0), MAX_RETRY_SECONDS)
    return base * random.uniform(0.5, 1.5)


def delivery_attempt(*, delivery_id: int) -> str | None:
    """Claim the delivery (if due and not held), send it, record the outcome; the outcome
    ("delivered", "retry", "failed") or None when there was nothing to do."""
    now = timezone.now()
    claimed = (
        WebhookDelivery.objects.filter(
            pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now
        )
        .filter(Q(locked_until__isnull=True) | Q(locked_until__lt=now))
        .update(locked_until=now + LEASE, attempts=F("attempts") + 1, last_attempt_at=now)
    )
    if not claimed:
        return None
    delivery = WebhookDelivery.objects.select_related("webhook", "event").get(pk=delivery_id)
    webhook, event = delivery.webhook, delivery.event
    status_code, error, text = None, "", ""
    started = time.monotonic()
    if not webhook.active and event.type != "webhook.ping":
        return _finish(delivery, DeliveryStatus.FAILED, None, "The subscription is inactive.", 0)
    body = json.dumps(event.as_payload(), separators=(",", ":"))
    try:
        target = target_check(webhook.url)
        headers = signature_headers(
            secrets=webhook.signing_secrets(), msg_id=event.public_id, when=now, body=body
        )
        response = _post(webhook.url, target, headers, body)
        status_code, text = response.status_code, response.text[:500]
    except TargetRefused as exc:
        error = str(exc)
    except httpx.TimeoutException:
        error = f"No answer within {TIMEOUT_SECONDS:.0f} s."
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}"[:500]
    duration = int((time.monotonic() - started) * 1000)
    if status_code is not None and 200 <= status_code < 300:
        return _finish(delivery, DeliveryStatus.DELIVERED, status_code, "", duration, text)
    if status_code == 410:
        with transaction.atomic():
            Webhook.objects.filter(pk=webhook.pk).update(
                active=False, deactivated_reason="The receiver answered 410 Gone."
            )
            return _finish(delivery, DeliveryStatus.FAILED, status_code, "410 Gone", duration, text)
    next_at = timezone.now() + dt.timedelta(seconds=retry_delay(delivery.attempts))
    if next_at > delivery.created_at + RETRY_WINDOW:
        return _finish(delivery, DeliveryStatus.FAILED, status_code, error, duration, text)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        response_status=status_code,
        error=error,
        response_body=text,
        duration_ms=duration,
        next_attempt_at=next_at,
        locked_until=None,
    )
    from apps.webhooks.tasks import deliver

    transaction.on_commit(lambda: deliver.using(run_after=next_at).enqueue(delivery_id=delivery.pk))
    return "retry"


def _finish(delivery, status, code, error, duration, text="") -> str:
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=status,
        response_status=code,
        error=error,
        response_body=text,
        duration_ms=duration,
        next_attempt_at=None,
        locked_until=None,
    )
    return str(status)


def deliveries_sweep(*, limit: int = 500) -> int:
    """Queue again the pending deliveries a killed worker or a lost task left behind; their
    hold is released and their due time moves to now, so the next sweep leaves them to the
    task queued here for another LOST_AFTER."""
    from apps.webhooks.tasks import deliver

    now = timezone.now()
    # Abandoned mid-attempt (the lease lapsed), or due so long ago that its task is lost; a
    # backlog shorter than LOST_AFTER is left to the tasks already queued.
    due = list(
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .filter(
            Q(locked_until__isnull=False, locked_until__lt=now)
            | Q(locked_until__isnull=True, next_attempt_at__lte=now - LOST_AFTER)
        )
        .order_by("next_attempt_at", "id")
        .values_list("pk", flat=True)[:limit]
    )
    if not due:
        return 0
    WebhookDelivery.objects.filter(pk__in=due).update(next_attempt_at=now, locked_until=None)
    for pk in due:
        deliver.enqueue(delivery_id=pk)
    return len(due)
