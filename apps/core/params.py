"""Numbers and DOTs from the outside world, parsed one way everywhere (contract section 13).

Python's int() reads "\uff11" (a fullwidth digit) as 1, "1_0" as 10 and " 7 " as 7, and happily
returns integers no database column holds; str.isdigit() says yes to superscripts. Every
integer taken from a path, a query or a form therefore goes through `ascii_int`, and every DOT
through `normalize_dot`, so that what is stored, compared and verified is the same string.
"""

from __future__ import annotations

import re

from rest_framework.exceptions import ValidationError

MAX_BIGINT = 2**63 - 1
_ASCII_DIGITS = re.compile(r"[0-9]+")
DOT_MAX_DIGITS = 8


def is_ascii_int(raw) -> bool:
    """Whether `raw` is a string of ASCII digits only (no sign, space, underscore or other
    script's digits)."""
    return isinstance(raw, str) and _ASCII_DIGITS.fullmatch(raw) is not None


def ascii_int(raw, *, field: str, minimum: int = 1, maximum: int = MAX_BIGINT) -> int:
    """An integer written in ASCII digits within minimum..maximum (at most 2^63-1), else 400."""
    message = f"Expected an integer between {minimum} and {maximum}, in ASCII digits."
    if isinstance(raw, bool):
        raise ValidationError({field: [message]})
    if isinstance(raw, int):
        value = raw
    elif is_ascii_int(raw) and len(raw) <= 19:
        value = int(raw)
    else:
        raise ValidationError({field: [message]})
    if not minimum <= value <= min(maximum, MAX_BIGINT):
        raise ValidationError({field: [message]})
    return value


def normalize_dot(raw, *, field: str = "dot") -> str:
    """A USDOT number as stored: ASCII digits, leading zeros dropped (01234567 is 1234567),
    at most 8 digits; all zeros or anything else is a 400."""
    text = raw.strip() if isinstance(raw, str) else raw
    if not is_ascii_int(text) or len(text) > DOT_MAX_DIGITS:
        raise ValidationError({field: [f"'{raw}' is not a DOT number (1 to 8 digits)."]})
    value = text.lstrip("0")
    if not value:
        raise ValidationError({field: [f"'{raw}' is not a DOT number (it is all zeros)."]})
    return value


def dot_or_none(raw) -> str | None:
    """The normalised DOT, or None when `raw` is not one (for model code, which must not raise
    a DRF error)."""
    try:
        return normalize_dot(raw)
    except ValidationError:
        return None
