"""Query-parameter parsing shared by verification and certificates."""

from __future__ import annotations

import datetime as dt

from rest_framework.exceptions import ValidationError

from apps.core.params import ascii_int, normalize_dot
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
    """A DOT in its normal form (leading zeros dropped), as it is stored."""
    return normalize_dot(raw, field=field)


def parse_vin(raw: str, field: str = "vin") -> str:
    value = raw.strip().upper()
    if not VIN_RE.match(value):
        raise ValidationError(
            {field: [f"'{raw}' is not a VIN (17 characters of A-H J-N P R-Z 0-9)."]}
        )
    return value


def parse_id(raw: str, field: str) -> int:
    return ascii_int(raw.strip() if isinstance(raw, str) else raw, field=field)
