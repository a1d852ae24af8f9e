"""Sending one delivery: SSRF guard with the resolved address pinned, Standard Webhooks
signature, 10 s timeout for the whole attempt, retries with exponential backoff and jitter
for 72 hours."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import math
import random
import socket
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from functools import reduce
from operator import or_
from urllib.parse import urlsplit

import certifi
import urllib3
from django.conf import settings
from django.db import transaction
from django.db.models import F, IntegerField, Q, Value
from django.db.models.expressions import RawSQL
from django.utils import timezone
from standardwebhooks.webhooks import Webhook as Signer
from urllib3.exceptions import NewConnectionError

from apps.events.models import Event
from apps.events.serializers import EventSerializer
from apps.webhooks.models import DeliveryStatus, Webhook, WebhookDelivery

TIMEOUT_SECONDS = 10.0  # one attempt, all of it: connecting, sending, the answer's head and body
PAUSED = "The subscription is paused."
SUPERSEDED = "superseded"  # an attempt that outlived its lease: another claim took it over
# A worker holds a delivery WEBHOOK_LEASE_SECONDS (60): longer than any attempt (the 10 s
# timeout); `webhooks.E001` refuses less than this.
SHORTEST_LEASE_SECONDS = 2 * TIMEOUT_SECONDS
RETRY_WINDOW = dt.timedelta(hours=72)
FIRST_RETRY_SECONDS = 10.0
MAX_RETRY_SECONDS = 3600.0


class TargetRefused(Exception):
    """The URL may not be called (scheme, unresolvable host, or a private address)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    address: str  # the resolved IP the connection is pinned to


NAT64 = ipaddress.ip_network("64:ff9b::/96")  # an IPv6 address that translates to its last 32 bits


def _networks(*blocks: str) -> tuple:
    return tuple(ipaddress.ip_network(block) for block in blocks)


# The IANA IPv4 and IPv6 Special-Purpose Address Registries (iana-ipv4-special-registry,
# iana-ipv6-special-registry; as of 2025): the blocks marked "Globally Reachable: False", and
# within them the ones marked True. Written out because `ipaddress`'s tables lag the registries
# and differ between Python versions (3.11's take the IPv4 dummy address 192.0.0.8 and IPv6
# documentation's 3fff::/20 for global addresses, and 2001:1::1, a PCP anycast address, for a
# private one). Blocks the registry marks N/A are refused: 2001::/32 (Teredo) and 2001:10::/28
# (ORCHID) inside 2001::/23; 2002::/16 (6to4) is judged by the IPv4 address it wraps.
NOT_GLOBALLY_REACHABLE = _networks(
    "0.0.0.0/8",  # "this network"
    "10.0.0.0/8",
    "100.64.0.0/10",  # shared address space (carrier NAT; some clouds' metadata service)
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",  # IETF protocol assignments: 192.0.0.8 (dummy), 192.0.0.170/31 (NAT64) ...
    "192.0.2.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "240.0.0.0/4",
    "255.255.255.255/32",
    "::1/128",
    "::/128",
    "::ffff:0:0/96",
    "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation
    "100::/64",  # discard-only
    "100:0:0:1::/64",  # dummy IPv6 prefix
    "2001::/23",  # IETF protocol assignments
    "2001:2::/48",
    "2001:db8::/32",
    "3fff::/20",  # documentation
    "5f00::/16",  # SRv6 SIDs
    "fc00::/7",
    "fe80::/10",
)
GLOBALLY_REACHABLE_WITHIN = _networks(
    "192.0.0.9/32",  # PCP anycast
    "192.0.0.10/32",  # TURN anycast
    "2001:1::1/128",  # PCP anycast
    "2001:1::2/128",  # TURN anycast
    "2001:1::3/128",  # DNS-SD SRP anycast
    "2001:3::/32",  # AMT
    "2001:4:112::/48",  # AS112-v6
    "2001:20::/28",  # ORCHIDv2
    "2001:30::/28",  # drone remote ID entity tags
)


def _unwrapped(address: str):
    """The address, or the IPv4 address an IPv6 one wraps (mapped, 6to4, NAT64): what the
    checks judge."""
    ip = ipaddress.ip_address(address)
    if ip.version == 6:
        wrapped = ip.ipv4_mapped or ip.sixtofour
        if wrapped is None and ip in NAT64:
            wrapped = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if wrapped is not None:
            return wrapped
    return ip


def _private(address: str) -> bool:
    """Not an address of the public internet: one the IANA registries mark not globally
    reachable (private, loopback, link-local, shared, documentation, benchmarking, the IETF's
    protocol assignments ...), one this Python's tables take for one, reserved, multicast, or
    an IPv6 address that wraps one of those (mapped, 6to4, NAT64). A block the registries mark
    globally reachable inside a refused one is accepted, whatever this Python says."""
    ip = _unwrapped(address)
    if any(ip in block for block in GLOBALLY_REACHABLE_WITHIN):
        return False
    return (
        any(ip in block for block in NOT_GLOBALLY_REACHABLE)
        or not ip.is_global
        or ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


# Cloud metadata services outside link-local: Alibaba Cloud's (in the shared address space)
# and AWS's IPv6 one (a unique local address).
METADATA_SERVICES = frozenset(ipaddress.ip_address(a) for a in ("100.100.100.200", "fd00:ec2::254"))


def _never_a_receiver(address: str) -> bool:
    """An address no webhook receiver listens on, even on the developer's machine or network:
    link-local (169.254.0.0/16 and fe80::/10, where cloud metadata services answer), a cloud
    metadata service elsewhere (`METADATA_SERVICES`), multicast, unspecified, IPv4 reserved (the
    broadcast among them), IPv6 site-local; also wrapped in an IPv6 address.
    WEBHOOK_ALLOW_PRIVATE_TARGETS admits private and loopback receivers, never these."""
    ip = _unwrapped(address)
    return (
        ip in METADATA_SERVICES
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_unspecified
        or (ip.version == 4 and ip.is_reserved)  # 240.0.0.0/4 (IPv6's ::/8 holds ::1)
        or (ip.version == 6 and ip.is_site_local)
    )


# A lookup outside an attempt (creating or changing a subscription: the API's 400) takes at
# most this long; an attempt's lookup takes at most what is left of the attempt's timeout.
RESOLVE_SECONDS = 5.0
# Lookups under way at once, at most; a hung one keeps its slot until the resolver gives up.
RESOLVERS = 16
_resolvers = threading.BoundedSemaphore(RESOLVERS)


class ResolveTimeout(Exception):
    """The host's lookup did not answer in time."""


def _resolve(host: str, port: int, timeout: float) -> list:
    """`socket.getaddrinfo` within `timeout` seconds (ResolveTimeout after): the system
    resolver has no deadline the caller sets, and a name server that never answers would hold
    a relay thread past the attempt's timeout and its lease, or a POST /v1/webhooks
    indefinitely. The lookup runs in a daemon thread of its own, at most RESOLVERS at once: a
    lookup left hung keeps only that thread, which cannot hold the process's exit as a
    ThreadPoolExecutor's worker would (they are joined at exit)."""
    deadline = time.monotonic() + timeout
    if not _resolvers.acquire(timeout=timeout):
        raise ResolveTimeout
    answer: dict = {}
    done = threading.Event()

    def lookup() -> None:
        try:
            answer["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except BaseException as exc:  # handed to the caller
            answer["error"] = exc
        finally:
            _resolvers.release()
            done.set()

    try:
        threading.Thread(target=lookup, name="resolve", daemon=True).start()
    except BaseException:
        _resolvers.release()
        raise
    if not done.wait(max(deadline - time.monotonic(), 0)):
        raise ResolveTimeout
    if "error" in answer:
        raise answer["error"]
    return answer["infos"]


def target_check(url: str, *, timeout: float | None = None) -> Target:
    """Resolve the URL's host once, within `timeout` seconds (default RESOLVE_SECONDS); refuse
    it when any address is private, loopback, link-local or multicast (unless
    WEBHOOK_ALLOW_PRIVATE_TARGETS, which admits private and loopback ones, never link-local,
    multicast or unspecified ones); the caller connects to the returned address, so a second
    resolution cannot swap in another one."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetRefused("The URL must be http:// or https:// with a host.")
    try:
        port = parts.port
    except ValueError:  # past 65535, or not a number
        port = 0
    if port == 0:
        raise TargetRefused("The URL's port must be a number from 1 to 65535.")
    port = port or (443 if parts.scheme == "https" else 80)
    timeout = RESOLVE_SECONDS if timeout is None else timeout
    try:
        infos = _resolve(parts.hostname, port, timeout)
    except (socket.gaierror, UnicodeError):
        raise TargetRefused(f"The host {parts.hostname} does not resolve.") from None
    except ResolveTimeout:
        raise TargetRefused(
            f"The host {parts.hostname} did not resolve within {math.ceil(timeout)} s."
        ) from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise TargetRefused(f"The host {parts.hostname} does not resolve.")
    # Whatever WEBHOOK_ALLOW_PRIVATE_TARGETS says, an address no receiver listens on (a cloud's
    # metadata service) is refused with the same words.
    allowed = settings.WEBHOOK_ALLOW_PRIVATE_TARGETS
    if any((_never_a_receiver if allowed else _private)(a) for a in addresses):
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


def _post(
    url: str, target: Target, headers: dict, body: str, deadline: float
) -> urllib3.BaseHTTPResponse:
    """POST to the pinned address, with the name in Host (an IPv6 literal in brackets, as the
    URL spells it; the port when the URL names one) and in the TLS SNI (checked against the
    certificate); no redirect followed, no retry (the delivery loop retries);
    connecting and the answer's head within what is left until `deadline` (monotonic)."""
    parts = urlsplit(url)
    name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname  # IPv6 literal
    host = name if parts.port is None else f"{name}:{parts.port}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return _pool_for(target).urlopen(
        "POST",
        path,
        body=body.encode(),
        headers={**headers, "host": host},
        redirect=False,
        retries=False,
        assert_same_host=False,
        timeout=urllib3.Timeout(total=_left(deadline)),
        preload_content=False,  # the answer is read by `_answer`, no more of it than is kept
    )


ANSWER_BYTES = 2000  # of a receiver's answer, read and kept (500 characters of it are logged)


def _left(deadline: float) -> float:
    """Seconds until `deadline`; a TimeoutError once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise urllib3.exceptions.TimeoutError("The attempt's deadline passed.")
    return left


def _answer(response: urllib3.BaseHTTPResponse, deadline: float) -> str:
    """The start of the receiver's answer, and the connection given back: kept for the next
    delivery when the answer was read to its end, else closed (a receiver may answer megabytes,
    or never finish: reading them would hold a relay thread for nothing). Read as it comes,
    each read within what is left until `deadline`: a receiver trickling its answer a byte at
    a time cannot stretch the attempt past its timeout (a TimeoutError)."""
    head = b""
    try:
        while len(head) < ANSWER_BYTES:
            left = _left(deadline)
            sock = getattr(response.connection, "sock", None)
            if sock is not None:  # set again for the next request if the connection is kept
                sock.settimeout(left)
            chunk = response.read1(ANSWER_BYTES - len(head))
            if not chunk:
                break
            head += chunk
    finally:
        if not response.closed:  # more to come: not read, so the connection cannot be reused
            response.close()
        response.release_conn()  # its place in the thread's pool (urllib3 returned it if read)
    return head.decode("utf-8", "replace")[:500]


_pools = threading.local()


def _pool_for(target: Target) -> urllib3.HTTPConnectionPool:
    """One keep-alive connection per thread and (address, port, name), to the checked address
    only: building an SSL context per request cost more than the request, and a connection
    is never reused for another name. urllib3 rather than httpx: the same request at about
    half the CPU, and the request was most of a delivery's (docs/webhooks.md, "Measured")."""
    pools = getattr(_pools, "pools", None)
    if pools is None:
        pools = _pools.pools = {}
    key = (target.scheme, target.address, target.port, target.host)
    pool = pools.get(key)
    if pool is None:
        if len(pools) > 100:
            for old in pools.values():
                old.close()
            pools.clear()
        options = {"maxsize": 1, "timeout": urllib3.Timeout(TIMEOUT_SECONDS), "retries": False}
        if target.scheme == "https":
            pool = urllib3.HTTPSConnectionPool(
                target.address,
                target.port,
                server_hostname=target.host,
                assert_hostname=target.host,
                cert_reqs="CERT_REQUIRED",
                ca_certs=certifi.where(),
                **options,
            )
        else:
            pool = urllib3.HTTPConnectionPool(target.address, target.port, **options)
        pools[key] = pool
    return pool


def retry_delay(attempts: int) -> float:
    """Seconds before the next attempt: doubling from 10 s, at most an hour, with jitter."""
    base = min(FIRST_RETRY_SECONDS * 2 ** max(attempts - 1, 0), MAX_RETRY_SECONDS)
    return base * random.uniform(0.5, 1.5)


@dataclass(frozen=True)
class Job:
    """A claimed delivery with what sending it needs (read in the claim's one query)."""

    id: int
    attempts: int
    created_at: dt.datetime
    webhook_id: int
    url: str
    active: bool
    secrets: tuple[str, ...]
    msg_id: str
    event_type: str
    body: str


@dataclass(frozen=True)
class Outcome:
    job: Job
    status_code: int | None
    error: str
    text: str
    duration_ms: int


_JOB_FIELDS = (
    "pk",
    "attempts",
    "created_at",
    "webhook_id",
    "webhook__url",
    "webhook__active",
    "webhook__secret",
    "webhook__previous_secret",
    "webhook__previous_secret_expires_at",
    "event_id",
    "event__type",
    "event__agency_id",
    "event__client_id",
    "event__occurred_at",
    "event__data",
)


def _job(row, now: dt.datetime) -> Job:
    (pk, attempts, created_at, webhook_id, url, active, secret, previous, previous_until) = row[:9]
    event_id, type_, agency_id, client_id, occurred_at, data = row[9:]
    secrets = (secret,)
    if previous and (previous_until is None or previous_until > now):
        secrets = (secret, previous)
    # The event as the feed shows it: EventSerializer on an unsaved copy built from the row.
    payload = EventSerializer.shape(
        Event(
            id=event_id,
            type=type_,
            agency_id=agency_id,
            client_id=client_id,
            occurred_at=occurred_at,
            data=data,
        )
    )
    return Job(
        id=pk,
        attempts=attempts,
        created_at=created_at,
        webhook_id=webhook_id,
        url=url,
        active=active,
        secrets=secrets,
        msg_id=payload["id"],
        event_type=type_,
        body=json.dumps(payload, separators=(",", ":")),
    )


def deliveries_claim(
    *,
    limit: int,
    delivery_id: int | None = None,
    exclude_webhooks: list[int] = (),
    exclude_ids: list[int] = (),
) -> list[Job]:
    """Claim up to `limit` due deliveries nobody holds (oldest due first), leaving out
    `exclude_ids` (the caller's own attempts still in flight, whatever their lease): in one short
    transaction, lock them with SKIP LOCKED (another worker claiming at the same moment takes
    other rows, never these), count the attempt and hold them for WEBHOOK_LEASE_SECONDS; then
    read what sending them needs in one query. A worker killed after this leaves them held
    until the lease lapses; then any worker claims them again (at least once). Each job
    carries the attempt count its claim left on the row: its fencing token (`_claimed`)."""
    now = timezone.now()
    due = (
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .filter(Q(locked_until__isnull=True) | Q(locked_until__lt=now))
        # A paused subscription's deliveries wait, unattempted, until it is re-activated.
        .filter(webhook__in=Webhook.objects.filter(active=True))
    )
    if delivery_id is not None:
        due = due.filter(pk=delivery_id)
    if exclude_webhooks:
        due = due.exclude(webhook_id__in=exclude_webhooks)
    if exclude_ids:
        due = due.exclude(pk__in=exclude_ids)
    with transaction.atomic():
        ids = list(
            due.select_for_update(skip_locked=True)
            # The due index's order: a tie-break on id made PostgreSQL sort the whole backlog
            # at every claim (6 ms with 5,000 pending instead of 0.1 ms).
            .order_by("next_attempt_at")
            .values_list("pk", flat=True)[:limit]
        )
        if not ids:
            return []
        WebhookDelivery.objects.filter(pk__in=ids).update(
            locked_until=now + dt.timedelta(seconds=settings.WEBHOOK_LEASE_SECONDS),
            attempts=F("attempts") + 1,
            last_attempt_at=now,
        )
    rows = WebhookDelivery.objects.filter(pk__in=ids).order_by().values_list(*_JOB_FIELDS)
    return [_job(row, now) for row in rows]


def _counted(jobs: list[Job]) -> Q:
    """Each id at the attempt count its claim left. One condition per distinct count (in a
    batch, nearly always one), not one per row."""
    by_count: dict[int, list[int]] = defaultdict(list)
    for job in jobs:
        by_count[job.attempts].append(job.id)
    return reduce(or_, (Q(pk__in=ids, attempts=n) for n, ids in by_count.items()))


def _claimed(jobs: list[Job]) -> Q:
    """The rows these claims still hold: at the attempt count each claim left, and still held.
    A claim whose lease lapsed no longer matches once another claim took the delivery over
    (counting another attempt), or once its hold was taken from it without a new attempt (a
    redelivery, the sweep, the end of a pause): the late worker writes nothing over what
    followed."""
    return _counted(jobs) & Q(locked_until__isnull=False)


def in_flight_for(locked_until: dt.datetime | None) -> float | None:
    """Seconds the attempt holding a delivery may still take (at most an attempt's timeout,
    at least 1), or None when no attempt holds it: its hold lapsed, or nobody claimed it."""
    if locked_until is None:
        return None
    left = (locked_until - timezone.now()).total_seconds()
    if left <= 0:
        return None
    return max(1.0, min(left, TIMEOUT_SECONDS))


def deliveries_release(jobs: list[Job]) -> None:
    """Give back claimed deliveries that were not attempted (a worker stopping, a
    subscription paused since the claim); not those another claim has taken over since."""
    if not jobs:
        return
    WebhookDelivery.objects.filter(_claimed(jobs), status=DeliveryStatus.PENDING).update(
        locked_until=None, attempts=F("attempts") - 1
    )


_targets = threading.local()
# A checked address is reused this long for the same URL (the connection stays pinned to it).
TARGET_TTL = 30.0


def _target_for(url: str, deadline: float) -> Target:
    """`target_check` within what is left until `deadline` (monotonic), remembered per thread
    for TARGET_TTL seconds: the resolution and the check run again after that, and whenever
    the URL changes."""
    cache = getattr(_targets, "cache", None)
    if cache is None:
        cache = _targets.cache = {}
    hit = cache.get(url)
    now = time.monotonic()
    if hit is not None and hit[1] > now:
        return hit[0]
    if len(cache) > 1000:
        cache.clear()
    target = target_check(url, timeout=_left(deadline))
    cache[url] = (target, now + TARGET_TTL)
    return target


def delivery_send(job: Job) -> Outcome:
    """POST one claimed delivery (no database access: safe in any thread)."""
    status_code, error, text = None, "", ""
    if not job.active:  # paused since the claim: given back unattempted (outcomes_record)
        return Outcome(job, None, PAUSED, "", 0)
    started = time.monotonic()
    deadline = started + TIMEOUT_SECONDS
    try:
        target = _target_for(job.url, deadline)  # the lookup within the attempt's timeout
        headers = signature_headers(
            secrets=list(job.secrets), msg_id=job.msg_id, when=timezone.now(), body=job.body
        )
        response = _post(job.url, target, headers, job.body, deadline)
        text = _answer(response, deadline)
        status_code = response.status  # once the answer is read, as when urllib3 read it all
    except TargetRefused as exc:
        error = str(exc)
    except NewConnectionError as exc:  # a refused connection (a ConnectTimeoutError subclass)
        error = f"{type(exc).__name__}: {exc}"[:500]
    except urllib3.exceptions.TimeoutError:
        error = f"No answer within {TIMEOUT_SECONDS:.0f} s."
    except urllib3.exceptions.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}"[:500]
    return Outcome(job, status_code, error, text, int((time.monotonic() - started) * 1000))


def _delivered(outcome: Outcome) -> bool:
    return outcome.status_code is not None and 200 <= outcome.status_code < 300


def outcomes_record(outcomes: list[Outcome]) -> list[str]:
    """Record what the attempts gave, in order ("delivered", "retry", "failed", "held" for
    a subscription paused since the claim, or "superseded": the attempt outlived its lease and
    another claim took the delivery over, so nothing of it is written): the 2xx ones in one
    update per distinct (status, answer), the rest one by one (410 deactivates, a failure is
    retried after a backoff or given up after the retry window)."""
    results: dict[int, str] = {}
    delivered: dict[tuple[int, str], list[Outcome]] = {}
    held = [o.job for o in outcomes if not o.job.active]
    deliveries_release(held)
    results.update(dict.fromkeys((job.id for job in held), "held"))
    for outcome in outcomes:
        if not outcome.job.active:
            continue
        if _delivered(outcome):
            delivered.setdefault((outcome.status_code, outcome.text), []).append(outcome)
        else:
            results[outcome.job.id] = _record_failure(outcome)
    for group in delivered.values():
        results.update(dict.fromkeys((o.job.id for o in group), SUPERSEDED))
        results.update(dict.fromkeys(_write(group, DeliveryStatus.DELIVERED), "delivered"))
    return [results[o.job.id] for o in outcomes]


def _record_failure(outcome: Outcome) -> str:
    job, code = outcome.job, outcome.status_code
    if code == 410:
        with transaction.atomic():
            if not _write([outcome], DeliveryStatus.FAILED, error="410 Gone"):
                return SUPERSEDED  # the claim that followed decides, the subscription too
            Webhook.objects.filter(pk=job.webhook_id).update(
                active=False, deactivated_reason="The receiver answered 410 Gone."
            )
        return "failed"
    next_at = timezone.now() + dt.timedelta(seconds=retry_delay(job.attempts))
    if next_at > job.created_at + RETRY_WINDOW:
        return "failed" if _write([outcome], DeliveryStatus.FAILED) else SUPERSEDED
    # Due again at next_at: whichever worker polls after then claims it.
    if not _write([outcome], DeliveryStatus.PENDING, next_attempt_at=next_at):
        return SUPERSEDED
    return "retry"


def _write(
    outcomes: list[Outcome],
    status: DeliveryStatus,
    *,
    error: str | None = None,
    next_attempt_at: dt.datetime | None = None,
) -> list[int]:
    """The one writer of attempt outcomes, in one update for outcomes with the same answer
    (their durations in one CASE on the id): the status, the answer (or `error`), and the release of
    the claim; due again at `next_attempt_at` when it is a retry. Only the rows each claim still
    holds (`_claimed`): an attempt that outlived its lease writes nothing. The ids written."""
    first = outcomes[0]
    ids = [o.job.id for o in outcomes]
    durations = {o.duration_ms for o in outcomes}
    if len(durations) == 1:
        duration = Value(durations.pop())
    else:
        # A plain CASE on the id: the ORM's Case(When(pk=…)) resolved a filter per row and
        # cost more CPU than sending the batch.
        duration = RawSQL(
            "CASE id " + "WHEN %s THEN %s " * len(outcomes) + "END",
            [value for o in outcomes for value in (o.job.id, o.duration_ms)],
            output_field=IntegerField(),
        )
    written = WebhookDelivery.objects.filter(_claimed([o.job for o in outcomes])).update(
        status=status,
        response_status=first.status_code,
        error=first.error if error is None else error,
        response_body=first.text,
        duration_ms=duration,
        next_attempt_at=next_attempt_at,
        locked_until=None,
    )
    if written == len(ids):
        return ids
    if not written:
        return []
    # Some of the batch were superseded: the rows written are those at their claim's count
    # that now have the status written and no hold (a batch is only ever `delivered`, and a
    # row taken over is held by the newer claim, or pending or failed with its hold taken).
    kept = _counted([o.job for o in outcomes]) & Q(status=status, locked_until__isnull=True)
    still = set(WebhookDelivery.objects.filter(kept).values_list("pk", flat=True))
    return [pk for pk in ids if pk in still]


def delivery_attempt(*, delivery_id: int) -> str | None:
    """Claim one delivery (if due and not held), send it, record the outcome; the outcome
    ("delivered", "retry", "failed") or None when there was nothing to do."""
    jobs = deliveries_claim(limit=1, delivery_id=delivery_id)
    if not jobs:
        return None
    return outcomes_record([delivery_send(jobs[0])])[0]


def deliveries_sweep(*, limit: int = 500) -> int:
    """Release the deliveries a killed worker left held (their lease lapsed): due now, held by
    nobody, so the next claim of any worker sends them again; how many. (A claim takes a
    lapsed hold by itself too; the sweep makes the release visible in the delivery log.)"""
    now = timezone.now()
    abandoned = list(
        WebhookDelivery.objects.filter(
            status=DeliveryStatus.PENDING, locked_until__isnull=False, locked_until__lt=now
        )
        .order_by("next_attempt_at", "id")
        .values_list("pk", flat=True)[:limit]
    )
    if not abandoned:
        return 0
    return WebhookDelivery.objects.filter(
        pk__in=abandoned, status=DeliveryStatus.PENDING, locked_until__lt=now
    ).update(next_attempt_at=now, locked_until=None)
