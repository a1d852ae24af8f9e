"""The /v1 JSON renderer writes the bytes the camel-case library's renderer wrote (issue 18)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections import OrderedDict
from decimal import Decimal

import pytest
from django.utils.translation import gettext_lazy
from djangorestframework_camel_case.render import CamelCaseJSONRenderer as LibraryRenderer
from rest_framework import serializers
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from apps.core.camel_case import CamelCased
from apps.core.renderers import CamelCaseJSONRenderer, camelize


class _Row(serializers.Serializer):
    policy_added_date = serializers.DateField()
    stated_value = serializers.DecimalField(max_digits=12, decimal_places=2)


SAMPLES = [
    None,
    "plain_string_value",
    0,
    1.5,
    True,
    [],
    {},
    {"snake_case_key": 1, "already": 2, "a_1_b": 3, "x_y_z_w": [4, 5]},
    {"policy_added_date": dt.date(2026, 1, 2), "at_time": dt.datetime(2026, 1, 2, 3, 4, 5)},
    {"amount_due": Decimal("12.50"), "record_uuid": uuid.UUID(int=7)},
    {"nested_list": [{"inner_key": {"deep_key": ("tuple_item", None)}}]},
    OrderedDict([("z_key", 1), ("a_key", 2)]),
    {gettext_lazy("lazy_key"): gettext_lazy("lazy_value")},
    {"set_value": {1}, "frozen_value": frozenset({"a_b"})},
    {"_leading": 1, "trailing_": 2, "double__under": 3, "UPPER_CASE": 4, "mixed_Case_9": 5},
    {"key_with_camel": {"alreadyCamel": {"and_snake": [1, [2, {"three_four": 5}]]}}},
    {1: "int_key", "str_key": 2},
]


@pytest.mark.parametrize("data", SAMPLES, ids=range(len(SAMPLES)))
def test_same_bytes_as_the_library(data):
    assert CamelCaseJSONRenderer().render(data) == LibraryRenderer().render(data)


def test_serializer_output_renders_alike():
    rows = _Row(
        [{"policy_added_date": dt.date(2026, 5, 1), "stated_value": Decimal("7")}] * 3, many=True
    ).data
    assert isinstance(rows, ReturnList)
    page = ReturnDict({"total_pages": 1, "results": rows}, serializer=None)
    assert CamelCaseJSONRenderer().render(page) == LibraryRenderer().render(page)
    assert b'"policyAddedDate":"2026-05-01"' in CamelCaseJSONRenderer().render(page)


def test_memo_is_bounded():
    for n in range(10_000):
        camelize({f"key_{n}": n})
    from apps.core import camel_case

    assert len(camel_case.CAMEL_KEYS) <= camel_case._KEYS_KEPT
    assert camelize({"key_9999": 1}) == {"key9999": 1}


def test_keys_seen_before_and_lazy_keys_equal_to_them_render_alike():
    # The second rendering of a dict takes the memo's fast path; a lazy key equal to a key
    # seen before is found in the memo, and converts as the library converts it.
    for data in (
        {"first_seen_key": {"inner_first_key": [1, {"deep_first_key": 2}]}},
        {"first_seen_key": 1, "never_seen_before_key": 2},
        {gettext_lazy("first_seen_key"): 1},
        {"first_seen_key": 1, 2: "int_key"},
    ):
        for _ in range(2):
            assert CamelCaseJSONRenderer().render(data) == LibraryRenderer().render(data)


def test_camel_cased_answers_are_sent_as_they_are():
    # Their keys are already final: not walked, even where a key has an underscore (a value's
    # key the answer chose to keep, which the walk would have changed).
    data = CamelCased(asOf="2026-01-02", results=[{"policyId": 1, "kept_as_is": {"a_b": 2}}])
    assert camelize(data) is data
    assert CamelCaseJSONRenderer().render(data) == (
        b'{"asOf":"2026-01-02","results":[{"policyId":1,"kept_as_is":{"a_b":2}}]}'
    )
    nested = {"outer_key": data}
    assert camelize(nested) == {"outerKey": data} and camelize(nested)["outerKey"] is data
