"""The /v1 JSON renderer writes the bytes the camel-case library's renderer wrote (issue 18):
its own key walk, and orjson's encoding where orjson writes what DRF's `json.dumps` wrote."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import math
import random
import struct
import uuid
from collections import OrderedDict
from decimal import Decimal
from unittest import mock

import pytest
from django.utils.translation import gettext_lazy
from djangorestframework_camel_case.render import CamelCaseJSONRenderer as LibraryRenderer
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from apps.core.camel_case import CamelCased, DataKeyed
from apps.core.renderers import CamelCaseJSONRenderer, PythonFloat, camelize


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


def test_a_mapping_keyed_by_data_keeps_its_keys_and_converts_inside_its_values():
    # Its keys are names from the data (a unit type "Day_cab tractor"), never renamed; the
    # field names inside its values are converted as everywhere else.
    data = {
        "by_unit_type": DataKeyed(
            {"Day_cab tractor": {"unit_count": 1}, "box_truck": {"unit_count": 2, "x_y": None}}
        )
    }
    assert CamelCaseJSONRenderer().render(data) == (
        b'{"byUnitType":{"Day_cab tractor":{"unitCount":1},"box_truck":{"unitCount":2,"xY":null}}}'
    )
    assert camelize(DataKeyed(a_b=1)) == {"a_b": 1}


# orjson's encoding: the same bytes as DRF's json.dumps, or DRF's path.


def _both(data, media_type=None):
    """(ours, the library's) rendering of `data`, or the type of the exception each raised."""
    out = []
    for renderer in (CamelCaseJSONRenderer(), LibraryRenderer()):
        try:
            out.append(renderer.render(data, media_type))
        except Exception as exc:  # the error is the rendering compared
            out.append(type(exc))
    return out


def test_plain_answers_are_encoded_by_orjson_and_others_by_drf():
    # A test of the path, so the byte comparisons below compare orjson where it is used.
    refused = mock.patch.object(JSONRenderer, "render", side_effect=AssertionError("DRF"))
    with refused:
        assert CamelCaseJSONRenderer().render({"snake_key": ["ü", 1, 2.5, None]}) == (
            '{"snakeKey":["ü",1,2.5,null]}'.encode()
        )
        lazy_and_dated = {"on_date": dt.date(2026, 1, 2), "set": {gettext_lazy("lazy")}}
        assert CamelCaseJSONRenderer().render(lazy_and_dated) == (
            b'{"onDate":"2026-01-02","set":["lazy"]}'
        )
    for data in ({"amount": Decimal("1.50")}, {"tiny": 1e-5}, {1: "int key"}, [2**64]):
        with refused, pytest.raises(AssertionError, match="DRF"):
            CamelCaseJSONRenderer().render(data)


FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.1, 2.5, 100.0, 123456.789, 1e-4, -1e-4, 0.00012345,
    9.999999999999999e-05, 1e-05, 1.5e-07, 1e-10, 5e-324, 1e15, 9999999999999998.0, 1e16,
    1.2345678901234568e17, 1e22, 1.7976931348623157e308, -2.2250738585072014e-308,
]  # fmt: skip


@pytest.mark.parametrize("value", FLOATS, ids=[repr(f) for f in FLOATS])
def test_floats_render_as_python_writes_them(value):
    ours, theirs = _both({"a_value": value, "values": [value, {"inner_value": value}]})
    assert ours == theirs


def test_floats_across_the_whole_range_render_as_python_writes_them():
    # Any 64-bit pattern (every exponent) and numbers of every size in decimal: orjson writes
    # each as repr() does, but for 0 < |x| < 1e-4, which the walk hands to DRF's encoder.
    rng = random.Random(18)
    values = [struct.unpack("d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(4000)]
    values += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 24) for _ in range(4000)]
    values = [value for value in values if math.isfinite(value)]
    assert any(0 < abs(value) < 1e-4 for value in values)
    ours = CamelCaseJSONRenderer().render({"values": values})
    assert ours == LibraryRenderer().render({"values": values})


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_refused_as_before(value):
    # DRF's strict JSON: a ValueError (a 500), where orjson would have written null.
    assert _both({"a_value": value}) == [ValueError, ValueError]
    assert _both([1, [value]]) == [ValueError, ValueError]


def test_floats_orjson_writes_otherwise_are_marked_wherever_the_walk_meets_them():
    assert type(camelize(0.5)) is float and type(camelize(1e-5)) is PythonFloat
    for data in (
        {gettext_lazy("lazy_key"): [1e-5, {"deep_key": 1e-7}]},
        {"set_value": {1e-6}, "listed": ((2e-5,),)},
        {"non_string_keys": {1: 3e-5}},
    ):
        ours, theirs = _both(data)
        assert ours == theirs and b"e-0" in ours


def test_every_character_renders_as_drf_escapes_it():
    # Control characters, quotes and backslashes escaped; U+2028 and U+2029 as \u2028 and
    # \u2029 (DRF's JavaScript-safe subset); every other character as its UTF-8.
    text = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)
    ours, theirs = _both({"all_characters": text, text[:300]: "as a key"})
    assert ours == theirs
    assert b"\\u2028" in ours and "\u2028".encode() not in ours


@pytest.mark.parametrize(
    "text",
    [
        "plain ASCII",
        "Caf\u00e9 (no E2 byte)",
        "O\u2019Brien \u20ac5 (E2 bytes, nothing to escape)",
        "line\u2028break",
        "paragraph\u2029break",
        "\u2019 then \u2029 then \u2028",
    ],
)
def test_the_javascript_line_separators_are_escaped_whatever_bytes_come_with_them(text):
    # The renderer looks for the byte E2 first (memchr), then for E2 80, then escapes: an
    # answer with other E2 characters, or with none, renders as DRF renders it.
    ours, theirs = _both({"name": text, "names": [text] * 3})
    assert ours == theirs
    assert "\u2028".encode() not in ours and "\u2029".encode() not in ours


def test_a_lone_surrogate_is_written_as_its_json_escape_where_the_library_raised():
    # UTF-8 cannot encode one, and the library's UnicodeEncodeError was a 500 (the parser
    # refuses one in a body; this is for one from anywhere else).
    ours, theirs = _both({"text": "broken \ud800 text", "city": "\u0141\u00f3d\u017a"})
    assert theirs is UnicodeEncodeError
    assert json.loads(ours) == {"text": "broken \ud800 text", "city": "\u0141\u00f3d\u017a"}


OBJECTS = [
    dt.date(2026, 1, 2),
    dt.datetime(2026, 1, 2, 3, 4, 5),
    dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC),
    dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=-6))),
    dt.time(3, 4, 5, 6),
    dt.time(3, 4, 5, tzinfo=dt.UTC),
    dt.timedelta(days=1, seconds=2),
    uuid.UUID(int=7),
    Decimal("12.50"),
    gettext_lazy("lazy text"),
    {1, 2},
    frozenset({"a_b"}),
    (x for x in ["generated_value"]),
    2**64,
    -(2**63) - 1,
    2**63,
    ipaddress.ip_address("10.0.0.1"),
    b"bytes",
    OrderedDict(b_key=1),
    {True: "bool key", None: "none key", 1.5: "float key"},
    {"circular": None},
]  # fmt: skip
OBJECTS[-1]["circular"] = OBJECTS[-1]


@pytest.mark.parametrize("value", OBJECTS, ids=range(len(OBJECTS)))
def test_objects_render_as_drf_spells_them(value):
    if hasattr(value, "__next__"):  # a generator is rendered once: one for each renderer
        ours = CamelCaseJSONRenderer().render({"value": (x for x in ["generated_value"])})
        assert ours == LibraryRenderer().render({"value": value})
        return
    ours, theirs = _both({"value": value, "nested": [{"value": value}]})
    assert ours == theirs


@pytest.mark.parametrize("indent", ["4", "0", "2", "9", "x"])
def test_an_indent_renders_as_drf_indents(indent):
    data = {"snake_key": ["ü", 1, {"inner_key": dt.date(2026, 1, 2)}], "empty_dict": {}}
    media_type = f"application/json; indent={indent}"
    ours, theirs = _both(data, media_type)
    assert ours == theirs
    assert (b"\n" in ours) == (indent not in ("0", "x"))


def test_no_data_is_no_body():
    assert _both(None) == [b"", b""]
