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
from collections.abc import Mapping
from types import MappingProxyType

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.serializers import as_serializer_error

from apps.core.camel_case import camel
from apps.core.dates import DATE_MESSAGE, date_from_text, today
from apps.core.identifiers import normalize_dot, normalize_dots, plate_problem

MAX_BIGINT = 2**63 - 1
# A record id's bounds as a field's keyword arguments (DRF's, Django's form and django-filter's
# integer fields all take these names): 1 to 2^63-1, the ids a bigint primary key holds. A
# field merges them under its own (`{**ID_BOUNDS, **kwargs}`).
ID_BOUNDS: Mapping[str, int] = MappingProxyType({"min_value": 1, "max_value": MAX_BIGINT})
_ASCII_DIGITS = re.compile(r"[0-9]+")


def is_ascii_int(raw) -> bool:
    """Whether `raw` is a string of ASCII digits only (no sign, space, underscore or other
    script's digits)."""
    return isinstance(raw, str) and _ASCII_DIGITS.fullmatch(raw) is not None


def id_or_none(raw) -> int | None:
    """`raw` as a record id (ASCII digits, 1 to 2^63-1), or None: for the places that ignore a
    value that is no id rather than answer 400 (an admin box's marks, a token's user claim)."""
    if is_ascii_int(raw) and len(raw) <= 19 and 0 < (value := int(raw)) <= MAX_BIGINT:
        return value
    return None


def ascii_int(
    raw, *, field: str, minimum: int = 1, maximum: int = MAX_BIGINT, message: str | None = None
) -> int:
    """An integer written in ASCII digits within minimum..maximum (at most 2^63-1), else a 400
    saying so (or `message`, the paging wording)."""
    message = message or f"Expected an integer between {minimum} and {maximum}, in ASCII digits."
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


def parse_positive_int(raw, *, field: str, default: int, maximum: int) -> int:
    """A paging number (or the event feed's): absent or empty is `default`, else `positive_int`."""
    if raw is None or raw == "":
        return default
    return positive_int(raw, field=field, maximum=maximum)


def positive_int(raw, *, field: str, maximum: int) -> int:
    """An integer within 1..maximum (`ascii_int`: white space around the digits is no digit),
    else a 400 in the paging wording."""
    return ascii_int(
        raw, field=field, maximum=maximum, message=f"Must be an integer between 1 and {maximum}."
    )


# --- query parameters, parsed by serializer fields -----------------------------------------


class QueryParameters(serializers.Serializer):
    """A view's query parameters as a serializer: the field `as_of` reads `?asOf=`.

    `one_of` names the parameters of which exactly one must be sent (checked first). Then each
    field parses its parameter in declaration order and the first bad one answers the 400, as
    the hand-written parsing always did; `validate()` runs after them all. A parameter that is
    absent or empty is not parsed (the field's default applies); `validated_data` holds only
    what was sent and the defaults.

    A view names its class `params_class`: the OpenAPI document shows its GET's query
    parameters from it (`apps.core.openapi.parameters_of`: each field's `help_text`, its
    `schema_type`, list fields as repeatable, a lone `one_of` as required), and the list fields
    are the parameters that may be repeated (`apps.core.query_params`).
    """

    one_of: tuple[str, ...] = ()

    @classmethod
    def parse(cls, request) -> dict:
        """The request's query parameters, parsed (a 400 on the first bad one), with the 400
        body `is_valid(raise_exception=True)` gives. The fields are bound once per class
        (`_shared`): DRF deep-copies a serializer's declared fields for every instance, which
        cost a verification about 7% of its time (docs/performance.md, sixth stop)."""
        parser = _shared(cls)
        values = parser.read(request.query_params, request)  # its 400 is already the body
        try:
            values = parser.validate(values)
        except (ValidationError, DjangoValidationError) as exc:
            raise ValidationError(as_serializer_error(exc)) from None
        return dict(values)

    def read(self, data, request) -> dict:
        """Each parameter parsed in declaration order; `request` goes to the fields that
        resolve something for the caller (`QueryParam.resolve`). Runs on the class's shared
        instance, so it keeps nothing on `self` or on the fields."""
        sent = [name for name, field in self.fields.items() if _sent(data, camel(name), field)]
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
                value = field.run_validation(raw)
                values[name] = field.resolve(value, request) if _resolves(field) else value
            except ValidationError as exc:
                if isinstance(exc.detail, dict):
                    raise
                raise ValidationError({camel(name): exc.detail}) from None
        return values


_SHARED: dict[type, QueryParameters] = {}


def _shared(cls: type[QueryParameters]) -> QueryParameters:
    """The class's one instance whose fields are bound, built on first use. Threads share it:
    parsing reads the fields (name, default, error messages, validators) and writes nothing on
    them, the request is passed to `read`, never kept in a `context`. Two threads building it
    at once build equal instances and either may win."""
    parser = _SHARED.get(cls)
    if parser is None:
        parser = cls()
        for field in parser.fields.values():
            field.validators  # noqa: B018 (DRF builds the list lazily on first read: build it now)
        _SHARED[cls] = parser
    return parser


def _resolves(field) -> bool:
    return isinstance(field, QueryParam) and type(field).resolve is not QueryParam.resolve


def _sent(data, key: str, field) -> bool:
    # Sent means the (last) value is not empty, as QueryDict.get() reads it; a field that reads
    # every value (`any_value_sends`) is sent if any of them is not empty.
    if getattr(field, "any_value_sends", False) and hasattr(data, "getlist"):
        return any(value != "" for value in data.getlist(key))
    return data.get(key) not in (None, "")


def _raw(data, key: str, *, many: bool):
    if many:
        return data.getlist(key) if hasattr(data, "getlist") else list(data.get(key) or [])
    return data.get(key)


class QueryParam(serializers.Field):
    """A query parameter: optional unless said otherwise, shown as it was parsed. The OpenAPI
    document shows it as its `schema_type` (a string unless it says `int`), described by its
    `help_text`."""

    def __init__(self, *, schema_type: type = str, **kwargs):
        self.schema_type = schema_type
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_representation(self, value):
        return value

    def resolve(self, value, request):
        """What the parsed value names for the caller (a record the request may see); as parsed
        unless a parameter says otherwise. The request comes from `QueryParameters.read`
        because the fields are shared by every request (`_shared`)."""
        return value


class TextParam(QueryParam):
    """Free text, as sent."""

    def to_internal_value(self, data) -> str:
        return data


class PositiveIntParam(QueryParam):
    """An integer within 1..maximum in the paging wording (`positive_int`); only a sent value is
    parsed (`QueryParameters.read`), an absent one takes the field's `default`."""

    def __init__(self, *, maximum: int = MAX_BIGINT, **kwargs):
        self.maximum = maximum
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> int:
        return positive_int(data, field=camel(self.field_name), maximum=self.maximum)


class AsOfParam(QueryParam):
    """A date as YYYY-MM-DD or MM-dd-yyyy; absent, today in the service's time zone."""

    default_error_messages = {"invalid": DATE_MESSAGE}

    def __init__(self, **kwargs):
        kwargs.setdefault("default", today)
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> dt.date:
        day = date_from_text(data.strip())
        if day is None:
            self.fail("invalid")
        return day

    def to_representation(self, value):
        return value.isoformat()


class IdParam(QueryParam):
    """A record id in ASCII digits, 1 to 2^63-1 (white space around them is no digit)."""

    def to_internal_value(self, data) -> int:
        return ascii_int(data, field=camel(self.field_name))


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
        problem = plate_problem(plate)  # "---" would name every unit without a plate
        if problem:
            raise ValidationError({camel(self.field_name): [problem]})
        return plate


class DotListParam(serializers.ListField):
    """DOT numbers, the parameter repeated and/or comma-separated, at most `most` distinct.
    Every value is read (`any_value_sends`): `dots=1234567&dots=` sends dots, whose empty
    value is refused (`normalize_dots`), not the parameter left unsent by its last value."""

    any_value_sends = True

    def __init__(self, *, most: int, **kwargs):
        self.most = most
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> list[str]:
        name = camel(self.field_name)
        dots = normalize_dots(data, field=name)
        if len(set(dots)) > self.most:
            raise ValidationError({name: [f"At most {self.most} DOT numbers."]})
        if not dots:
            raise ValidationError({name: ["Send at least one DOT number."]})
        return dots
