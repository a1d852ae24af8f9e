"""The /v1 JSON parser gives the data and the errors the camel-case library's parser gave
(issue 18): its own key walk (apps.core.camel_case.underscoreize) replaces the library's."""

from __future__ import annotations

import io
import json
from unittest import mock

import pytest
from django.conf import settings
from djangorestframework_camel_case import util
from djangorestframework_camel_case.parser import CamelCaseJSONParser as LibraryParser
from rest_framework.exceptions import ParseError

from apps.core import camel_case
from apps.core.parsers import BoundedCamelCaseJSONParser

BODIES = [
    "{}",
    "[]",
    "null",
    '"justAString"',
    "12.5",
    '{"vins": ["1BNCH000000000001", "x"], "licensePlates": [], "asOf": null, "profile": 7}',
    '{"addressLine1": 1, "a1B": 2, "ABCDef": 3, "already_snake": 4, "HTTPStatus": 5, "": 6}',
    '{"fooBar": 1, "outer": {"innerKey": [{"deepKey": [1, {"deeperKey": true}]}]}}',
    '{"naïveKey": "ünï", "emptyList": [[], {}], "numbers": [1, -0.0, 1e16, 123456789012345678901]}',
    '{"dup": 1, "dup": 2}',
]


def _library(body: str):
    return LibraryParser().parse(io.BytesIO(body.encode()), "application/json", {})


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_same_data_as_the_library(body):
    ours = BoundedCamelCaseJSONParser().parse(io.BytesIO(body.encode()), "application/json", {})
    theirs = _library(body)
    assert ours == theirs
    assert json.dumps(ours) == json.dumps(theirs)  # key order too


@pytest.mark.parametrize("body", ["{not json", '{"a": }', "", b"\xff\xfe".decode("latin-1")])
def test_same_error_as_the_library(body):
    with pytest.raises(ParseError) as ours:
        BoundedCamelCaseJSONParser().parse(io.BytesIO(body.encode()), "application/json", {})
    with pytest.raises(ParseError) as theirs:
        _library(body)
    assert str(ours.value.detail) == str(theirs.value.detail)


def test_invalid_utf8_is_the_library_error():
    body = b'{"a": "\xff"}'
    with pytest.raises(ParseError) as ours:
        BoundedCamelCaseJSONParser().parse(io.BytesIO(body), "application/json", {})
    with pytest.raises(ParseError) as theirs:
        LibraryParser().parse(io.BytesIO(body), "application/json", {})
    assert str(ours.value.detail) == str(theirs.value.detail)


@pytest.mark.django_db
def test_batch_body_is_not_walked_value_by_value(api):
    # A thousand VINs are one list, converted in one step: the library's walk called itself and
    # `iter()` (through is_iterable) on each string.
    vins = [f"1BNCH{n:012d}" for n in range(1000)]
    with mock.patch.object(util, "is_iterable", wraps=util.is_iterable) as per_value:
        response = api.post("/v1/coverages/vehicles/batch", {"vins": vins}, format="json")
    assert response.status_code == 200, response.content
    assert len(response.json()["results"]) == 1000
    assert per_value.call_count == 0


def test_key_memo_is_bounded():
    for n in range(10_000):
        camel_case.underscoreize({f"someKey{n}x": n})
    assert len(camel_case.SNAKE_KEYS) <= camel_case._KEYS_KEPT
    options = settings.JSON_CAMEL_CASE["JSON_UNDERSCOREIZE"]
    assert camel_case.underscoreize({"someKey9999x": 1}) == util.underscoreize(
        {"someKey9999x": 1}, **options
    )
