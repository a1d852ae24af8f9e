"""Name, code or id lookup of master data: the one path every write takes."""

from __future__ import annotations

from collections.abc import Iterable

import django_filters
from django.db.models import Model, Q
from django.db.models.functions import Lower
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty

from apps.core.camel_case import camel
from apps.core.params import ID_BOUNDS
from apps.core.serializers import StrictCharField, StrictIntegerField
from apps.masterdata.models import City, CoverageType, State, city_outside_state, name_key


def resolve(model: type[Model], value) -> Model:
    """Find a master-data row by id (an integer), by code where it has one, or by name.

    Names ignore case and surrounding spaces; states also match their USPS code and coverage
    types their code. Unknown values raise a ValidationError that names the value.
    """
    if isinstance(value, bool) or value is None:
        raise unknown(model, value)
    if isinstance(value, int):
        found = model.objects.filter(pk=value).first()
    else:
        text = _lookup_text(value)
        if text is None:
            raise unknown(model, value)
        found = None
        if _by_code(model, text):
            found = model.objects.filter(code__iexact=text).first()
        if found is None:
            found = model.objects.filter(name_key=text.lower()).first()
    if found is None:
        raise unknown(model, value)
    return found


def resolve_many(model: type[Model], values: Iterable[str]) -> dict[str, Model]:
    """`resolve` of many names or codes at once, in one query whatever their number (a fleet
    batch's plate states): each value (as given) that names a row, to that row, by the same
    rule (the code first where the model has codes, then the name, case and surrounding spaces
    ignored). A value left out is one `resolve` refuses: raise `unknown(model, value)`."""
    texts = {value: text for value in values if (text := _lookup_text(value)) is not None}
    if not texts:
        return {}
    names = {text.lower() for text in texts.values()}
    codes = {text.lower() for text in texts.values() if _by_code(model, text)}
    rows = model.objects.all()
    wanted = Q(name_key__in=sorted(names))
    if codes:
        rows = rows.annotate(code_key=Lower("code"))
        wanted |= Q(code_key__in=sorted(codes))
    by_code, by_name = {}, {}
    for row in rows.filter(wanted):
        by_name[row.name_key] = row
        if codes:
            by_code[row.code_key] = row
    found = {}
    for value, text in texts.items():
        row = by_code.get(text.lower()) if _by_code(model, text) else None
        if row is None:
            row = by_name.get(text.lower())
        if row is not None:
            found[value] = row
    return found


def unknown(model: type[Model], value) -> serializers.ValidationError:
    """The error of a value that names no row of `model`."""
    label = model._meta.verbose_name
    return serializers.ValidationError(f"Unknown {label}: '{value}'.", code="unknown")


def _lookup_text(value) -> str | None:
    """The text a name or code is looked up by (spaces around dropped); None for a value that
    cannot name a row (blank, longer than any name)."""
    text = str(value).strip()
    return text if text and len(text) <= 120 else None


def _by_code(model: type[Model], text: str) -> bool:
    """Whether `text` is looked up as a code first (states' USPS codes, coverage types')."""
    return model in (State, CoverageType) and len(text) <= 10


class MasterDataFilter(django_filters.CharFilter):
    """A list filter on a master-data reference by name, code or id (`licenseState=TX`); an
    unknown value is a 400 on the parameter."""

    def __init__(self, model: type[Model], *args, **kwargs):
        self.master_data = model  # not `model`: the filter set sets that to its own model
        super().__init__(*args, **kwargs)

    def filter(self, qs, value):
        if value in (None, ""):
            return qs
        try:
            found = resolve(self.master_data, value)
        except serializers.ValidationError as exc:
            raise serializers.ValidationError({camel(self.field_name): exc.detail}) from None
        return qs.filter(**{self.field_name: found})


def resolve_city(state: State | None, value) -> City:
    """A city is looked up within its state: naming a city needs a state."""
    if state is None:
        raise serializers.ValidationError("A city needs its state.", code="state_required")
    if isinstance(value, int):
        city = City.objects.filter(pk=value, state=state).first()
    else:
        city = City.objects.filter(state=state, name_key=name_key(str(value))).first()
    if city is None:
        raise serializers.ValidationError(
            f"Unknown city: '{value}' in {state.name}.", code="unknown"
        )
    return city


def _name_or_id(description: str) -> dict:
    """The schema of a reference written by name or by integer id."""
    return {
        "oneOf": [{"type": "string"}, {"type": "integer"}],
        "nullable": True,
        "description": description,
    }


@extend_schema_field(
    _name_or_id("Name (case-insensitive; states also by USPS code) or integer id.")
)
class MasterDataField(serializers.Field):
    """A master-data reference written by name (or code, or integer id), read as its name."""

    default_error_messages = {"invalid": "Expected a name or an integer id."}

    def __init__(self, model: type[Model], *, display: str = "name", **kwargs):
        self.model = model
        self.display = display
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, (str, int)) or isinstance(data, bool):
            self.fail("invalid")
        return resolve(self.model, data)

    def to_representation(self, value):
        return getattr(value, self.display) if value is not None else None


@extend_schema_field({"type": "integer", "nullable": True})
class MasterDataIdField(StrictIntegerField):
    """The same reference by its integer id (`stateId`): an id as every other id field takes
    one (a JSON integer, not text, a float or a boolean, within 1..2^63-1, with the same
    messages), then the row it names."""

    def __init__(self, model: type[Model], **kwargs):
        self.model = model
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(**{**ID_BOUNDS, **kwargs})

    def run_validation(self, data=empty):
        # The integer with its range checked first (the validators compare numbers), then the
        # row: `to_internal_value` stays the integer's.
        pk = super().run_validation(data)
        return pk if pk is None else resolve(self.model, pk)

    def to_representation(self, value):
        return value.pk if value is not None else None


@extend_schema_field(_name_or_id("City name within the state, or integer id."))
class CityField(serializers.Field):
    """A city by name (or id), resolved in the serializer's validate() against its state."""

    default_error_messages = {"invalid": "Expected a city name or an integer id."}

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (str, int)):
            self.fail("invalid")
        return UnresolvedCity(data)

    def to_representation(self, value):
        return value.name if value is not None else None


class UnresolvedCity:
    """A city value waiting for its state."""

    def __init__(self, value):
        self.value = value
        self.resolved = self  # none yet: compares with nothing but itself


def resolve_cities(attrs: dict, instance, pairs: list[tuple[str, str]]) -> dict:
    """Resolve each (city field, state field) pair in validated attrs, in place, and keep each
    city in its state (`city_outside_state`), naming the field the request sent: the city by
    name, by id (`cityId`), or the state sent alone when the stored city is not in it.

    The state is the one written in the same request, else the record's current one.
    """
    errors = {}
    for city_field, state_field in pairs:
        raw = attrs.get(city_field)
        state = attrs.get(state_field, getattr(instance, state_field, None) if instance else None)
        if isinstance(raw, UnresolvedCity):
            try:
                # `resolved`: compared with a cityId sent too (OneRecordPerAttribute)
                attrs[city_field] = raw.resolved = resolve_city(state, raw.value)
            except serializers.ValidationError as exc:
                errors[city_field] = exc.detail
            continue
        if city_field in attrs:  # by id (`cityId`), or none
            field, city = f"{city_field}_id", raw
        elif state_field in attrs and instance is not None:
            field, city = state_field, getattr(instance, city_field)
        else:
            continue
        message = city_outside_state(city, state)
        if message:
            errors[field] = message
    if errors:
        raise serializers.ValidationError(errors)
    return attrs


def address_fields(prefix: str = "") -> type[serializers.Serializer]:
    """The fields of a postal address, named with `prefix` (`mailing_`): the street, its state
    and city by name or id, the zip code. A serializer inherits them and resolves its cities
    with `resolve_cities(attrs, instance, [(f"{prefix}city", f"{prefix}state")])`."""
    fields = {
        f"{prefix}address": StrictCharField(required=False, allow_blank=True, max_length=300),
        f"{prefix}state_id": MasterDataIdField(State, source=f"{prefix}state"),
        f"{prefix}state": MasterDataField(State),
        f"{prefix}city_id": MasterDataIdField(City, source=f"{prefix}city"),
        f"{prefix}city": CityField(),
        f"{prefix}zip_code": StrictCharField(required=False, allow_blank=True, max_length=10),
    }
    name = "".join(part.title() for part in prefix.split("_")) + "AddressFields"
    # `field_names`: the same names in order, for the serializer's Meta.fields.
    return type(name, (serializers.Serializer,), {**fields, "field_names": tuple(fields)})


AddressFields = address_fields()
