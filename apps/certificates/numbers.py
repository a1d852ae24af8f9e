"""Certificate numbers that can be checked: what was certified, as of when, signed.

`C-42-20261122-3F9A1C07B2` reads: a client certificate (C; V for a vehicle) of record 42 as of
2026-11-22, with the first ten hex digits of an HMAC of those parts under the service's
secret. Anyone holding the number can ask the service to show the certificate again; nobody
can forge one for another record or date.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
from dataclasses import dataclass

from django.conf import settings

from apps.core.dates import iso_text

NUMBER_RE = re.compile(
    r"^(?P<kind>[CV])-(?P<id>[0-9]{1,18})-(?P<date>[0-9]{8})-(?P<sig>[0-9A-F]{10})$"
)


@dataclass(frozen=True)
class CertificateRef:
    kind: str  # "C" client, "V" vehicle
    record_id: int
    as_of: dt.date


def _digits(as_of: dt.date) -> str:
    """20261122: the date's eight digits, year 1 too (00010101), as the number is read back."""
    return iso_text(as_of).replace("-", "")


def _signature(kind: str, record_id: int, as_of: dt.date) -> str:
    message = f"certificate:{kind}:{record_id}:{_digits(as_of)}".encode()
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:10].upper()


def certificate_number(kind: str, record_id: int, as_of: dt.date) -> str:
    return f"{kind}-{record_id}-{_digits(as_of)}-{_signature(kind, record_id, as_of)}"


def certificate_kind(number: str) -> str | None:
    """ "C" or "V" for anything shaped like a certificate number, genuine or not; None else."""
    match = NUMBER_RE.match(number.strip().upper())
    return match["kind"] if match else None


def parse_certificate_number(number: str) -> CertificateRef | None:
    """The reference a genuine number encodes, or None for anything else."""
    match = NUMBER_RE.match(number.strip().upper())
    if not match:
        return None
    kind, record_id = match["kind"], int(match["id"])
    try:
        as_of = dt.datetime.strptime(match["date"], "%Y%m%d").date()
    except ValueError:
        return None
    if not hmac.compare_digest(match["sig"], _signature(kind, record_id, as_of)):
        return None
    return CertificateRef(kind, record_id, as_of)
