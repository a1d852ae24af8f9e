"""Idempotency-Key handling (contract section 11), kept in the database for every node.

The first request with a key inserts a row in its own committed transaction; a concurrent
twin then hits the unique constraint and sees the row in progress (409). The finished response
is stored on the row and replayed for 24 hours; a 5xx deletes the row so the client can retry.

A request whose process died (killed, out of memory, a node lost) leaves its row unfinished
and no answer: it is not running, so it must not hold the key (contract section 11: "while
the first is still running: 409"; a first request that failed is not stored). On PostgreSQL a
request holds its key's advisory lock on its own connection from before it claims the row
until it has stored its answer; a process that dies closes its connection, which frees the
lock at once, so an unfinished row whose lock is free belongs to no running request and the
next request with the key takes it over and runs. On other databases (SQLite: one machine) an
unfinished row older than CLAIM_LEASE is taken as abandoned.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re

from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from apps.core.exceptions import Conflict, UnprocessableEntity
from apps.core.models import IdempotencyRecord
from apps.core.problems import PROBLEM_CONTENT_TYPE

HEADER = "Idempotency-Key"
LIFETIME = dt.timedelta(hours=24)
# Without advisory locks: how long an unfinished request may hold its key (an upload behind
# nginx has 65 s to answer, deploy/nginx/insurance.conf).
CLAIM_LEASE = dt.timedelta(minutes=5)
IN_PROGRESS = "A request with this Idempotency-Key is still in progress."


class StillInProgress(Conflict):
    """A twin of a request still running (contract section 11: 409 while the first runs),
    with `Retry-After: 1`: an upload is seconds at most, and the retry then replays its answer."""

    default_detail = IN_PROGRESS
    wait = 1  # Retry-After


_KEY_RE = re.compile(r"^[\x20-\x7e]{1,255}$")


def parse_key(raw: str | None) -> str | None:
    """The key of the header (bare or as a quoted string), None when absent; else 400."""
    if raw is None:
        return None
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not value or not _KEY_RE.match(value):
        raise ValidationError(
            {HEADER: ["Must be 1 to 255 printable ASCII characters."]}, code="invalid"
        )
    return value


def fingerprint(fields: dict[str, str], file_sha256: str | None) -> str:
    """What makes two requests 'the same': parsed form fields and the file's digest."""
    canonical = json.dumps({"fields": fields, "file": file_sha256}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _lock_id(user, method: str, path: str, key: str) -> int:
    """The key's advisory lock: a signed 64-bit number from the claim's identity."""
    digest = hashlib.sha256(f"{user.pk}\n{method}\n{path}\n{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _advisory() -> bool:
    return connection.vendor == "postgresql"


def _try_lock(lock_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [lock_id])
        return cursor.fetchone()[0]


def _unlock(lock_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s)", [lock_id])


def _abandoned(record, now, locked: bool) -> bool:
    """An unfinished claim no running request holds: on PostgreSQL, one whose lock this
    request could take (`locked`); elsewhere, one older than CLAIM_LEASE."""
    if _advisory():
        return locked
    return record.created_at <= now - CLAIM_LEASE


def begin(*, user, method: str, path: str, key: str, request_hash: str):
    """Claim the key, or return the stored Response to replay; raise 409/422 as the contract says.

    Returns (record, None) for a first request, (None, response) for a replay. A first request
    must call `finish` with its answer, whatever it is.
    """
    lock_id = _lock_id(user, method, path, key)
    locked = _advisory() and _try_lock(lock_id)
    try:
        record, replay = _begin(
            user=user,
            method=method,
            path=path,
            key=key,
            request_hash=request_hash,
            locked=locked,
        )
    except BaseException:
        if locked:
            _unlock(lock_id)
        raise
    if record is not None:
        record.lock_id = lock_id if locked else None
    elif locked:
        _unlock(lock_id)
    return record, replay


def _begin(*, user, method: str, path: str, key: str, request_hash: str, locked: bool):
    now = timezone.now()
    claim = IdempotencyRecord.objects.filter(user=user, method=method, path=path, key=key)
    if _advisory() and not locked:  # a running request holds the key: never claim it
        existing = claim.first()
        if existing is None or existing.expires_at <= now:
            raise StillInProgress()
        return _answer(existing, request_hash, now, locked)
    for _ in range(2):
        try:
            with transaction.atomic():
                record = IdempotencyRecord.objects.create(
                    user=user,
                    method=method,
                    path=path,
                    key=key,
                    request_hash=request_hash,
                    expires_at=now + LIFETIME,
                )
            return record, None
        except OperationalError as exc:
            # SQLite serialises writers: a twin that waited past the lock timeout while the
            # first request held the write lock gets "database is locked". The key is taken
            # or about to be, so its answer is the twin's answer (409, retry), never a 5xx.
            if "locked" not in str(exc).lower() and "busy" not in str(exc).lower():
                raise
            raise StillInProgress() from None
        except IntegrityError:
            existing = claim.first()
            if existing is None:
                continue  # deleted meanwhile (a failed first try): claim it now
            if existing.expires_at <= now:
                existing.delete()
                continue
            return _answer(existing, request_hash, now, locked)
    raise StillInProgress()


def _answer(existing, request_hash: str, now, locked: bool):
    """What a request gets for a key claimed before it: 422 for other content, 409 while the
    first runs, the first's answer replayed, or the claim of a request that died."""
    if existing.request_hash != request_hash:
        raise UnprocessableEntity("This Idempotency-Key was used with a different request.")
    if existing.response_status is None:
        if _abandoned(existing, now, locked):  # its request died: this one runs
            IdempotencyRecord.objects.filter(pk=existing.pk).update(created_at=now)
            return existing, None
        raise StillInProgress()
    status = existing.response_status
    response = Response(
        existing.response_body,
        status=status,
        content_type=PROBLEM_CONTENT_TYPE if status >= 400 else None,
    )
    response["Idempotent-Replayed"] = "true"
    for name, value in (existing.response_headers or {}).items():
        response[name] = value
    return None, response


def finish(record, *, status: int, body, headers: dict[str, str] | None = None) -> None:
    """Store the answer for replays, or forget the key after a server error; then free the
    key's lock."""
    try:
        if status >= 500:
            IdempotencyRecord.objects.filter(pk=record.pk).delete()
            return
        IdempotencyRecord.objects.filter(pk=record.pk).update(
            response_status=status, response_body=body, response_headers=headers or {}
        )
    finally:
        if getattr(record, "lock_id", None) is not None:
            _unlock(record.lock_id)
