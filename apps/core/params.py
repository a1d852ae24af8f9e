"""Numbers and DOTs from the outside world, parsed one way everywhere (contract section 13).

Python's int() reads "\uff11" (a fullwidth digit) as 1, "1_0" as 10 and " 7 " as 7, and happily
returns integers no database column holds; str.isdigit() says yes to superscripts. Every
integer taken from a path, a query or a form therefore goes through `ascii_int`, and every DOT
through `normalize_dot` (apps/core/identifiers.py, with the VIN), so that what is stored,
compared and verified is the same string.
"""

from __future__ import annotations

import datetime as dt
import re

from django.utils import timezone
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from apps.core.camel_case import camel
from apps.core.identifiers import normalize_dot

MAX_BIGINT = 2**63 - 1
_ASCII_DIGITS = re.compile(r"[0-9]+")


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


# --- query parameters, parsed by serializer fields -----------------------------------------

DATE_FORMATS = ("%Y-%m-%d", "%m-%d-%Y")


class QueryParameters(serializers.Serializer):
    """A view's query parameters as a serializer: the field `as_of` reads `?asOf=`.

    `one_of` names the parameters of which exactly one must be sent (checked first). Then each
    field parses its parameter in declaration order and the first bad one answers the 400, as
    the hand-written parsing always did. A parameter that is absent or empty is not parsed
    (the field's default applies); `validated_data` holds only what was sent.
    """

    one_of: tuple[str, ...] = ()

    @classmethod
    def parse(cls, request) -> dict:
        """The request's query parameters, parsed (a 400 on the first bad one); the request is
        in the context for the parameters that resolve something for the caller."""
        params = cls(data=request.query_params, context={"request": request})
        params.is_valid(raise_exception=True)
        return dict(params.validated_data)

    def to_internal_value(self, data):
        # Sent means the (last) value is not empty, as QueryDict.get() reads it.
        sent = [name for name in self.fields if data.get(camel(name)) not in (None, "")]
        if self.one_of:
            present = [name for name in self.one_of if name in sent]
            if len(present) != 1:
                listed = ", ".join(f"'{camel(n)}'" for n in self.one_of)
                raise ValidationError(
                    {camel(self.one_of[0]): [f"Send exactly one of {listed}."]},
                    code="exactly_one",
                )
        values = {}
        for name, field in self.fields.items():
            if name not in sent:
                if field.default is not serializers.empty:
                    values[name] = field.get_default()
                continue
            raw = _raw(data, camel(name), many=isinstance(field, serializers.ListField))
            try:
                values[name] = field.run_validation(raw)
            except ValidationError as exc:
                if isinstance(exc.detail, dict):
                    raise
                raise ValidationError({camel(name): exc.detail}) from None
        return values


def _raw(data, key: str, *, many: bool):
    if many:
        return data.getlist(key) if hasattr(data, "getlist") else list(data.get(key) or [])
    return data.get(key)


class QueryParam(serializers.Field):
    """A query parameter: optional unless said otherwise, shown as it was parsed."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_representation(self, value):
        return value


class AsOfParam(QueryParam):
    """A date as YYYY-MM-DD or MM-dd-yyyy; absent, today in the service's time zone."""

    default_error_messages = {"invalid": "Expected a date as YYYY-MM-DD or MM-dd-yyyy."}

    def __init__(self, **kwargs):
        kwargs.setdefault("default", timezone.localdate)
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> dt.date:
        for fmt in DATE_FORMATS:
            try:
                return dt.datetime.strptime(data.strip(), fmt).date()
            except ValueError:
                continue
        self.fail("invalid")

    def to_representation(self, value):
        return value.isoformat()


class IdParam(QueryParam):
    """A record id in ASCII digits, 1 to 2^63-1."""

    def to_internal_value(self, data) -> int:
        return ascii_int(
            data.strip() if isinstance(data, str) else data, field=camel(self.field_name)
        )


class DotParam(QueryParam):
    """A USDOT number in its stored form (leading zeros dropped)."""

    def to_internal_value(self, data) -> str:
        return normalize_dot(data, field=camel(self.field_name))


class PlateParam(QueryParam):
    """A license plate as sent (stripped), at most 15 characters."""

    def to_internal_value(self, data) -> str:
        plate = data.strip()
        if len(plate) > 15:
            raise ValidationError({camel(self.field_name): ["A plate has at most 15 characters."]})
        return plate


class DotListParam(serializers.ListField):
    """DOT numbers, the parameter repeated and/or comma-separated, at most `most` distinct."""

    def __init__(self, *, most: int, **kwargs):
        self.most = most
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> list[str]:
        name = camel(self.field_name)
        raw = [part for value in data for part in value.split(",")]
        dots = [normalize_dot(value, field=name) for value in raw if value.strip()]
        if len(set(dots)) > self.most:
            raise ValidationError({name: [f"At most {self.most} DOT numbers."]})
        if not dots:
            raise ValidationError({name: ["Send at least one DOT number."]})
        return dots
