"""Filter building blocks shared by every list."""

from __future__ import annotations

import django_filters
from django import forms
from django.http import QueryDict
from rest_framework.exceptions import ValidationError

from apps.core.identifiers import dot_or_none, not_a_dot_message
from apps.core.money_forms import MoneyFormField
from apps.core.params import ID_BOUNDS, is_ascii_int


def json_value_refusal(declared: django_filters.Filter, value) -> str | None:
    """Why `value`, a JSON value a legacy search body gives the filter `declared` (one of an
    array's values too), cannot stand for its query parameter; None when it can. A parameter is
    text: a string stands for any (as the query writes it), a boolean for a boolean filter, a
    number for a numeric one; nothing else, an object or an array never (searched for as their
    Python text, "{'x': 1}", they matched nothing)."""
    if isinstance(value, str):
        return None
    if isinstance(declared, django_filters.BooleanFilter):
        return None if isinstance(value, bool) else "Must be true or false."
    if isinstance(declared, django_filters.NumberFilter):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return None if number else "Expected a number."
    return "Expected a string."


class DotFormField(forms.CharField):
    """A DOT number as stored (`dot_or_none`: leading zeros dropped, then 1 to 8 digits), or
    the query parameter's 400 naming the value (`not_a_dot_message`), as verification says."""

    def to_python(self, value):
        text = super().to_python(value)
        if text in self.empty_values:
            return text
        dot = dot_or_none(text)
        if dot is None:
            raise forms.ValidationError(not_a_dot_message(text), code="invalid")
        return dot


class DotFilter(django_filters.CharFilter):
    """A DOT number, compared in its stored form (`DotFormField`); what is no DOT: 400."""

    field_class = DotFormField


class AsciiIntegerField(forms.IntegerField):
    """ASCII digits only: Django's IntegerField reads "\uff11" as 1, "1_0" as 10 and " 1" as 1
    (a query's integer is its digits alone, contract section 13)."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        text = str(value)
        if not is_ascii_int(text) or len(text) > 19:
            raise forms.ValidationError("Expected an integer in ASCII digits.", code="invalid")
        return int(text)


class QueryBooleanField(forms.NullBooleanField):
    """A boolean query parameter: true/false/1/0 only; anything else is an error, not "no filter".

    The JSON body's boolean is `apps.core.serializers.StrictBooleanField` (JSON true/false).
    """

    widget = forms.TextInput

    def to_python(self, value):
        if value is None:
            return None
        text = str(value).strip().lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise forms.ValidationError("Must be true or false.", code="invalid")

    def validate(self, value):
        return None


class StrictBooleanFilter(django_filters.BooleanFilter):
    field_class = QueryBooleanField


def sent_values(data):
    """The parameters as a filter reads them: one sent empty (`?deleted=`, `?dot=`) is not
    there, as `QueryParameters` (apps.core.params) reads it; of a repeated one, its non-empty
    values."""
    if not hasattr(data, "lists") or all("" not in values for _, values in data.lists()):
        return data  # nothing empty (or not a QueryDict): as it came
    kept = QueryDict(mutable=True)
    for key, values in data.lists():
        sent = [value for value in values if value != ""]
        if sent:
            kept.setlist(key, sent)
    return kept


class ListFilterSet(django_filters.FilterSet):
    """The base of every list's filters (the GET lists and the legacy searches' `filter`): a
    parameter sent empty is the filter not given, whatever its type (`sent_values`), where a
    boolean's answered 400 and the others were ignored."""

    def __init__(self, data=None, *args, **kwargs):
        super().__init__(None if data is None else sent_values(data), *args, **kwargs)


class DeletedFilterSet(ListFilterSet):
    """Soft-deleted rows are left out unless `deleted` asks for them."""

    deleted = StrictBooleanFilter(field_name="deleted")

    @property
    def qs(self):
        queryset = super().qs
        if self.form.cleaned_data.get("deleted") is None:
            queryset = queryset.live()
        return queryset


class IdFilter(django_filters.NumberFilter):
    """A record id: a positive integer within range, else 400 (never a database error)."""

    field_class = AsciiIntegerField

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**ID_BOUNDS, **kwargs})


class MoneyFilter(django_filters.NumberFilter):
    """An amount of money (a list's `minValue`, `maxValue`), read as the API's body reads money
    (`MoneyFormField`: plain ASCII decimal text, at most 12 digits before the point and 2
    after): what a body's money field refuses is a 400 naming the parameter with its message.
    Django's DecimalField took `1e3`, `1_000` and full-width digits, and said "Enter a number."
    """

    field_class = MoneyFormField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_digits", 14)
        kwargs.setdefault("decimal_places", 2)
        super().__init__(*args, **kwargs)


class UpperChoiceFilter(django_filters.CharFilter):
    """A choice matched in any case; an unknown value is a 400."""

    def __init__(self, *args, choices, **kwargs):
        self.allowed = {c.upper() for c in choices}
        super().__init__(*args, **kwargs)

    def filter(self, qs, value):
        if value in (None, ""):
            return qs
        value = value.strip().upper()
        if value not in self.allowed:
            raise ValidationError(
                {self.field_name: [f"Must be one of {', '.join(sorted(self.allowed))}."]}
            )
        return qs.filter(**{self.field_name: value})
