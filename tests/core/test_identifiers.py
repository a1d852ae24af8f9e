"""DOT numbers and VINs are validated one way everywhere (apps/core/identifiers.py): the model
field, the serializers, the query parameters and the fleet import all reach the same rule."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework.exceptions import ValidationError

from apps.clients.models import Client
from apps.core.identifiers import (
    VIN_MESSAGE,
    dot_validator,
    normalize_dot,
    normalize_dots,
    parse_vin,
    vin_validator,
)
from apps.vehicles.models import Vehicle


@pytest.mark.parametrize(
    ("raw", "stored"),
    [("1234567", "1234567"), ("01234567", "1234567"), ("0001234567", "1234567")],
)
def test_a_dot_is_stored_without_leading_zeros(raw, stored):
    assert normalize_dot(raw) == stored


@pytest.mark.parametrize(
    "raw", ["0", "00000000", "123456789", "0123456789", "12a", "\uff11", "1_0", "-1", ""]
)
def test_what_is_not_a_dot_is_a_400_naming_the_field(raw):
    with pytest.raises(ValidationError) as caught:
        normalize_dot(raw, field="dots")
    assert list(caught.value.detail) == ["dots"]


def _one_by_one(values: list[str]) -> list[str]:
    parts = [part for value in values for part in value.split(",")]
    return [normalize_dot(part, field="dots") for part in parts]


@pytest.mark.parametrize(
    "values",
    [
        ["1234567"],
        ["1234567", "2345678", "1234567"],
        ["1,2,3", "45678901"],
        ["01234567", "2345678"],  # a leading zero: checked one by one
        [" 1234567 ", "2345678"],
        [" 1234567, 2345678 "],
    ],
)
def test_many_dots_are_each_normalised_as_one_is(values):
    assert normalize_dots(values, field="dots") == _one_by_one(values)


@pytest.mark.parametrize(
    "values",
    [["1234567", ""], ["1234567,,2345678"], [","], ["", " "], [" "], ["1234567,"], ["0,"]],
)
def test_a_blank_dot_among_many_is_a_400_not_skipped(values):
    with pytest.raises(ValidationError) as caught:
        normalize_dots(values, field="dots")
    assert caught.value.detail == {
        "dots": ["Empty DOT number in dots (a blank value, or nothing between two commas)."]
    }


@pytest.mark.parametrize(
    "values",
    [["1234567", "0"], ["123456789"], ["1234567", "12a"], ["\uff11"], ["1_0"], ["1234567,-1"]],
)
def test_many_dots_with_one_bad_are_a_400_naming_the_field(values):
    with pytest.raises(ValidationError) as caught:
        _one_by_one(values)
    expected = caught.value.detail
    with pytest.raises(ValidationError) as caught:
        normalize_dots(values, field="dots")
    assert caught.value.detail == expected


def test_the_model_fields_use_the_one_validator_of_each_identifier():
    assert dot_validator in Client._meta.get_field("dot").validators
    assert vin_validator in Vehicle._meta.get_field("serial_number").validators


def test_a_vin_is_compared_in_upper_case_without_spaces():
    assert parse_vin(" 1xkydp9x5mj000001 ") == "1XKYDP9X5MJ000001"


@pytest.mark.parametrize("raw", ["1XKYDP9X5MJ00000", "1XKYDP9X5MJ0000011", "1XKYDP9X5MJ00000I"])
def test_what_is_not_a_vin_fails_both_forms_alike(raw):
    # One wording of what a VIN is, whoever checks: a query or batch, a model, a fleet file.
    with pytest.raises(ValidationError) as query:
        parse_vin(raw)
    with pytest.raises(DjangoValidationError) as model:
        vin_validator(raw)
    assert query.value.detail["vin"] == [f"'{raw}' is not a VIN. {VIN_MESSAGE}"]
    assert model.value.messages == [VIN_MESSAGE]
