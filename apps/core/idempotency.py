"""Idempotency-Key handling (contract section 11), kept in the database for every node.

The first request with a key inserts a row in its own committed transaction; a concurrent
twin then hits the unique constraint and sees the row in progress (409). The finished response
is stored on the row and replayed for 24 hours; a 5xx deletes the row so the client can retry.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re

from django.db import IntegrityError, OperationalError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from apps.core.exceptions import Conflict, UnprocessableEntity
from apps.core.models import IdempotencyRecord
from apps.core.problems import PROBLEM_CONTENT_TYPE

HEADER = "Idempotency-Key"
LIFETIME = dt.timedelta(hours=24)
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


def begin(*, user, method: str, path: str, key: str, request_hash: str):
    """Claim the key, or return the stored Response to replay; raise 409/422 as the contract says.

    Returns (record, None) for a first request, (None, response) for a replay.
    """
    now = timezone.now()
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
            raise Conflict("A request with this Idempotency-Key is still in progress.") from None
        except IntegrityError:
            existing = IdempotencyRecord.objects.filter(
                user=user, method=method, path=path, key=key
            ).first()
            if existing is None:
                continue  # deleted meanwhile (a failed first try): claim it now
            if existing.expires_at <= now:
                existing.delete()
                continue
            if existing.request_hash != request_hash:
                raise UnprocessableEntity(
                    "This Idempotency-Key was used with a different request."
                ) from None
            if existing.response_status is None:
                raise Conflict(
                    "A request with this Idempotency-Key is still in progress."
                ) from None
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
    raise Conflict("A request with this Idempotency-Key is still in progress.")


def finish(record, *, status: int, body, headers: dict[str, str] | None = None) -> None:
    """Store the answer for replays, or forget the key after a server error."""
    if status >= 500:
        IdempotencyRecord.objects.filter(pk=record.pk).delete()
        return
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        response_status=status, response_body=body, response_headers=headers or {}
    )
