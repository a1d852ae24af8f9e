"""Query-parameter parsing shared by verification and certificates."""

from __future__ import annotations

import datetime as dt

from rest_framework.exceptions import ValidationError

from apps.policies.selectors import today
from apps.vehicles.models import VIN_RE

DATE_FORMATS = ("%Y-%m-%d", "%m-%d-%Y")


def parse_as_of(params) -> dt.date:
    raw = params.get("asOf")
    if raw in (None, ""):
        return today()
    for fmt in DATE_FORMATS:
        try:
            return dt.datetime.strptime(raw.strip(), fmt).date()
        except ValueError:
            continue
    raise ValidationError({"asOf": ["Expected a date as YYYY-MM-DD or MM-dd-yyyy."]})


def exactly_one(params, names: tuple[str, ...]) -> str:
    """The one parameter of `names` present; both-or-neither is a 400."""
    present = [name for name in names if params.get(name) not in (None, "")]
    if len(present) != 1:
        listed = ", ".join(f"'{n}'" for n in names)
        raise ValidationError({names[0]: [f"Send exactly one of {listed}."]}, code="exactly_one")
    return present[0]


def parse_dot(raw: str, field: str = "dot") -> str:
    value = raw.strip()
    if not value.isdigit() or not 1 <= len(value) <= 8 or not value.isascii():
        raise ValidationError({field: [f"'{raw}' is not a DOT number (1 to 8 digits)."]})
    return value


def parse_vin(raw: str, field: str = "vin") -> str:
    value = raw.strip().upper()
    if not VIN_RE.match(value):
        raise ValidationError(
            {field: [f"'{raw}' is not a VIN (17 characters of A-H J-N P R-Z 0-9)."]}
        )
    return value


def parse_id(raw: str, field: str) -> int:
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValidationError({field: ["Expected a positive integer."]}) from None
    if value < 1 or value > 2**63 - 1:
        raise ValidationError({field: ["Expected a positive integer."]})
    return value
