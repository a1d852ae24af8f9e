"""Serializer building blocks shared by every app."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import Field, SkipField, empty
from rest_framework.relations import PKOnlyObject

from apps.core.camel_case import DataKeyed, camel
from apps.core.dates import DATE_MESSAGE, date_from_text, us_text
from apps.core.money import format_money, money_text, not_money_text_message
from apps.core.params import ID_BOUNDS
from apps.core.people import people_for


class UtcDateTimeField(serializers.DateTimeField):
    """Timestamps are always rendered in UTC with a trailing Z."""

    def __init__(self, **kwargs):
        kwargs.setdefault("default_timezone", dt.UTC)
        super().__init__(**kwargs)

    def to_representation(self, value):
        if value is None:
            return None
        return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class MoneyField(serializers.DecimalField):
    """Money: a decimal string with two places ("1000000.00"), the one way amounts render."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_digits", 14)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("coerce_to_string", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        return format_money(value)


class DataKeyedDictField(serializers.DictField):
    """A mapping whose keys are data (names from master data), not field names: the /v1
    renderer sends its keys as they are and camel-cases only inside its values. Every such
    mapping of an answer is declared with this field, so the rule is this one place."""

    def to_representation(self, value):
        return DataKeyed(super().to_representation(value))


# The audit fields AuditedModelSerializer declares, in the order a record shows them last.
AUDIT_FIELDS = ("created_at", "updated_at", "created_by", "updated_by")


class PlannedRepresentation:
    """`to_representation` as DRF's `Serializer.to_representation` answers it, its readable
    fields read through a plan made once per serializer (a list's child serves every row).

    DRF finds each field's value through `Field.get_attribute`, which walks `source_attrs`
    with `fields.get_attribute` (a Mapping test, a callable test, an exception handler per
    step): a fifth of a list page's Python (issue 18). The plan walks a field's source with
    `getattr` alone when the field reads its value as `Field` does, and hands anything else to
    the field's own `get_attribute`, which then answers exactly as before: a field that reads
    its value otherwise (a related field by primary key, a method field, a `*` source), and any
    value the plain walk cannot take (an exception on the way, such as None in the middle of
    `lienholder.name` or a related record that does not exist; a Mapping, which DRF reads by
    key; or a callable, which DRF may call). A value that raises on the way is read twice, the
    second time by DRF's own path, which decides what the exception means."""

    def _read_plan(self) -> list:
        plan = self.__dict__.get("_planned")
        if plan is None:
            plan = self.__dict__["_planned"] = [
                (
                    field.field_name,
                    tuple(field.source_attrs),
                    field.get_attribute,
                    field.to_representation,
                    type(field).get_attribute is Field.get_attribute and bool(field.source_attrs),
                )
                for field in self._readable_fields
            ]
        return plan

    def to_representation(self, instance):
        if isinstance(instance, Mapping):  # read by key, as DRF reads a Mapping
            return serializers.Serializer.to_representation(self, instance)
        ret = {}
        for name, attrs, get_attribute, represent, plain in self._read_plan():
            value = instance
            try:
                if not plain:
                    raise _Unplanned
                for attr in attrs:
                    if value is not instance and isinstance(value, Mapping):
                        raise _Unplanned  # DRF reads a Mapping by key
                    value = getattr(value, attr)
                    if callable(value):
                        raise _Unplanned
            except Exception:
                try:
                    value = get_attribute(instance)
                except SkipField:
                    continue
                if isinstance(value, PKOnlyObject):
                    ret[name] = None if value.pk is None else represent(value)
                    continue
            ret[name] = None if value is None else represent(value)
        return ret


class _Unplanned(Exception):
    """A value the plan leaves to the field's own `get_attribute`."""


class OneRecordPerAttribute:
    """Fields that write one attribute (a reference by id, by name or by code: `insurerId` and
    `insurerName`, `coverageType` and `fullCoverageTypeName`, `makeId`, `makes` and
    `makeCompanyName`) may be sent together, and must then say the same: different records are
    a 400 on each of them, naming the others (contract 6); DRF let the last one declared win in
    silence. A null beside a value names nothing (`"coverageType": null` with a
    `fullCoverageTypeName`): the value stands, whatever the order. A value resolved only in
    `validate()` (a city, within its state) is compared once it is, by its `resolved`."""

    def run_validation(self, data=empty):
        self._written = {}  # attribute path -> the values written to it, in field order
        attrs = super().run_validation(data)
        errors = {}
        for keys, values in self._written.items():
            if len(values) < 2:
                continue
            names = [  # the fields DRF wrote it with: those sent, in order
                f.field_name
                for f in self._writable_fields
                if tuple(f.source_attrs) == keys and f.get_value(data) is not empty
            ]
            said = {
                name: getattr(value, "resolved", value)
                for name, value in zip(names, values, strict=True)
                if value is not None
            }
            for name, value in said.items():
                others = ", ".join(camel(n) for n, v in said.items() if v != value)
                if others:
                    errors[name] = [f"Names another record than {others}."]
        if errors:
            raise serializers.ValidationError(errors, code="conflict")
        return attrs

    def set_value(self, dictionary, keys, value):
        written = self.__dict__.get("_written")
        if written is not None and keys:  # not a `source="*"` field, which writes several
            values = written.setdefault(tuple(keys), [])
            values.append(value)
            if value is None and any(v is not None for v in values):
                return  # names nothing: the value written before stands
        super().set_value(dictionary, keys, value)


class PersonField(serializers.CharField):
    """A who field (`createdBy`, `uploadedBy`…): the username of the user its `source` (a
    user-stamp foreign key, `created_by`) names, if the viewer may see that user named
    (apps.core.people: a member of one of the viewer's agencies, or a superuser); else null.

    The viewer is the request's user, or the `people` the context gives (a change-feed record
    is written for its agency). Without either, only superusers are named. The key is read, not
    the user's row: the users a list names are read together, once for its page (the list's
    rows are announced to the viewer's `People` before the first is named), not once per row."""

    def __init__(self, **kwargs):
        kwargs["read_only"] = True
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def _people(self):
        people = self.__dict__.get("_viewer_people")
        if people is None:
            context = self.context
            people = context.get("people")
            if people is None:
                people = people_for(getattr(context.get("request"), "user", None))
            self._viewer_people = people
            root = self.root
            if isinstance(root, serializers.ListSerializer) and isinstance(root.instance, list):
                people.expect(root.instance)  # a page: all its rows' people in one query
        return people

    def get_attribute(self, instance):
        # The record that holds the key (`source` "created_by": the instance itself).
        for attr in self.source_attrs[:-1]:
            instance = None if instance is None else getattr(instance, attr)
        return instance

    def to_representation(self, record) -> str | None:
        return self._people().name(record, self.source_attrs[-1])


class AuditedModelSerializer(
    PlannedRepresentation, OneRecordPerAttribute, serializers.ModelSerializer
):
    """ModelSerializer whose timestamps are UTC and whose audit fields are read-only; its who
    fields name only the people the viewer may see (`PersonField`)."""

    created_at = UtcDateTimeField(read_only=True)
    updated_at = UtcDateTimeField(read_only=True)
    created_by = PersonField()
    updated_by = PersonField()

    def get_validators(self):
        # Uniqueness is a service rule answered with 409, not a serializer 400.
        return []


def reference_id_field(**kwargs) -> serializers.IntegerField:
    """An integer reference to another record (`clientId`, `parentClientId`…), within a record
    id's bounds unless `kwargs` names its own."""
    return StrictIntegerField(**{**ID_BOUNDS, **kwargs})


def require_on_create(serializer, attrs: dict, sources: dict[str, tuple[str, str]]) -> None:
    """On create, each source attribute must be present; the error names the first field.

    `sources` maps an attribute to (the field named in the error, a hint at the alternatives):
    the first of the alternatives the spec allows is the one named.
    """
    if serializer.instance is not None:
        return
    missing = {
        field: f"This field is required ({hint})."
        for attr, (field, hint) in sources.items()
        if attrs.get(attr) is None
    }
    if missing:
        raise serializers.ValidationError(missing)


class AsciiDateField(serializers.DateField):
    """A date in a body, read as `asOf` in the query is (`date_from_text`): YYYY-MM-DD or
    MM-dd-yyyy in exactly those ASCII digits, and refused with its words (`DATE_MESSAGE`), not
    DRF's list of strptime formats. DRF's strptime read any script's digits (a fullwidth 2 in
    the year) and unpadded parts (2026-3-1)."""

    default_error_messages = {"invalid": DATE_MESSAGE}

    def to_internal_value(self, value):
        if not isinstance(value, str):
            return super().to_internal_value(value)  # a date object, or refused (a number)
        day = date_from_text(value)
        if day is None:
            self.fail("invalid")
        return day


@extend_schema_field(
    {
        "type": "string",
        "nullable": True,
        "pattern": r"^(\d{2}-\d{2}-\d{4}|\d{4}-\d{2}-\d{2})$",
        "description": "MM-dd-yyyy (ISO accepted on input).",
    }
)
class DriverDateField(AsciiDateField):
    """Driver dates: MM-dd-yyyy on output, MM-dd-yyyy or ISO on input (spec section 2)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("input_formats", ["%m-%d-%Y", "%Y-%m-%d"])
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        return us_text(value)


class StrictCharField(serializers.CharField):
    """Text only: a number or a boolean where text is expected is a 400, not coerced."""

    default_error_messages = {"invalid": "Expected a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only (multipart form values, which are always text, may be digits)."""

    def to_internal_value(self, data):
        if isinstance(data, (bool, float)):
            self.fail("invalid")
        if isinstance(data, str) and not self._from_form():
            self.fail("invalid")
        return super().to_internal_value(data)

    def _from_form(self) -> bool:
        request = self.context.get("request") if hasattr(self, "context") else None
        content_type = getattr(request, "content_type", "") or ""
        return content_type.startswith("multipart/")


class StrictTextListField(serializers.ListField):
    """A list of strings of at most `max_length` characters each: `ListField(child=
    StrictCharField(max_length=...))`, the same values and the same errors. A list whose strings
    are all already clean (not blank, no surrounding space, no NUL, not too long), as a batch's
    1,000 VINs are, is taken as it is: DRF's walk of the child field over each item (its
    validation, its validators) was most of a batch's input cost (issue 18). Any other list
    takes that walk, so its errors are DRF's own."""

    def __init__(self, *, max_length: int, **kwargs):
        self.item_max_length = max_length
        # A `child` of its own takes what is not a clean string (the fleet batch's plate
        # objects) and reads the strings as `StrictCharField(max_length=...)` does.
        kwargs.setdefault("child", StrictCharField(max_length=max_length))
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        most = self.item_max_length
        if type(data) is list and all(
            type(v) is str and 0 < len(v) <= most and v == v.strip() and "\x00" not in v
            for v in data
        ):
            return list(data)
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """true or false only."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictMoneyField(MoneyField):
    """Money as a decimal string (contract section 6): anything else that is not text (a JSON
    number) is refused saying so, text that is no plain decimal as DRF's DecimalField says."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError(not_money_text_message(data), code="invalid")
        value = money_text(data)
        if value is None:
            self.fail("invalid")
        return super().to_internal_value(str(value))


REPEATED_FIELD_MESSAGE = "Send this field once."


class SingleValuedFormSerializer(serializers.Serializer):
    """A multipart form whose fields each take one value: a field sent twice is a 400 naming
    it (code `repeated`) and nothing is stored; a part the form does not take is ignored."""

    # As a query parameter sent twice (contract section 13), judged before any field is read,
    # in any spelling the parser reads as the field's: DRF's fields read the last part, so
    # `clientId=3&clientId=1` uploaded to client 1 and the second of two files was stored.

    def to_internal_value(self, data):
        if hasattr(data, "getlist"):  # form data: every part of a name, in order
            repeated = {
                name: [serializers.ErrorDetail(REPEATED_FIELD_MESSAGE, code="repeated")]
                for name, field in self.fields.items()
                if not field.read_only and len(data.getlist(name)) > 1
            }
            if repeated:
                raise serializers.ValidationError(repeated)
        return super().to_internal_value(data)


class CaseInsensitiveChoiceField(serializers.ChoiceField):
    """A choice whose codes are upper case, accepted in any case and with spaces around
    (`" active"` is ACTIVE); an unknown one is named upper-cased in the error."""

    def to_internal_value(self, data):
        if isinstance(data, str):
            data = data.strip().upper()
        return super().to_internal_value(data)


class SoftDeletedFields(serializers.Serializer):
    """A soft-deleted record's flag (written to delete or restore) and when it was deleted."""

    deleted = StrictBooleanField(required=False)
    deleted_at = UtcDateTimeField(read_only=True, allow_null=True)

    field_names = ("deleted", "deleted_at")


# An output serializer whose declared fields are the schema and whose `shape` renders.
#
# DRF renders a record field by field (a field object, `get_attribute` and `to_representation`
# per value): for verification's 1,000-unit batch that would be most of the request. A shaped
# serializer maps one record to its declared fields in one function, the static method
# `shape(record, ...)`, which nested shapes call directly (no field tree is built while
# rendering). tests/coverages/test_verification_shapes.py holds each one to its declaration:
# the keys it renders are the fields it declares, in order, at every depth. (Comments, not a
# docstring: drf-spectacular would take a docstring as every subclass's schema description.)
#
# `data` is the shaped dict itself: DRF's `ReturnDict` points back to its serializer, which keeps
# it (`_data`), a reference cycle that leaves a whole answer (a batch's ~400,000 objects) to the
# cyclic garbage collector instead of freeing it when the response is sent; that collection was
# a third of a batch's CPU.
class ShapedSerializer(serializers.Serializer):
    def to_representation(self, instance):
        return self.shape(instance)

    @property
    def data(self):
        return self.to_representation(self.instance)
