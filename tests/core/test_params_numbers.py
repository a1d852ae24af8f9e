"""Integers from the outside world have one rule (`ascii_int`): the paging numbers only add
their default and their wording, and a parameter's 400 reaches the caller as its field raised
it (issue 14 / issue 18 leftovers)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.test import RequestFactory
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from apps.core import params
from apps.core.params import PositiveIntParam, QueryParameters, ascii_int, parse_positive_int

SAMPLES = [
    "1", "7", "500", "501", "0", "-1", "+1", "1_0", "\uff11", "\u00b2", "1.0", "", " ", "x",
    " 7", "7 ", "\t7", "7\n",
    "9223372036854775807", "9223372036854775808", "00000000000000000001", 1, 0, 501, -3,
    True, False, 1.0, 2**70,
]  # fmt: skip


def _accepts(parse, raw):
    try:
        return parse(raw)
    except ValidationError as exc:
        return exc.detail


@pytest.mark.parametrize("raw", SAMPLES)
def test_paging_numbers_are_ascii_int_in_the_paging_wording(raw):
    paging = _accepts(lambda r: parse_positive_int(r, field="limit", default=25, maximum=500), raw)
    if raw == "":
        assert paging == 25
        return
    plain = _accepts(lambda r: ascii_int(r, field="limit", maximum=500), raw)
    if isinstance(plain, int):
        assert paging == plain
    else:
        assert paging == {"limit": ["Must be an integer between 1 and 500."]}


def test_paging_numbers_are_read_by_ascii_int():
    with mock.patch.object(params, "ascii_int", wraps=params.ascii_int) as rule:
        assert parse_positive_int("7", field="page", default=1, maximum=10) == 7
    rule.assert_called_once()


def test_a_positive_int_parameter_has_no_default_of_its_own():
    # Only a sent value reaches the field; were an empty one parsed, it is no integer (it was
    # 0, outside 1..maximum, through an unused default).
    field = PositiveIntParam(maximum=5)
    field.bind("limit", parent=None)
    with pytest.raises(ValidationError) as caught:
        field.to_internal_value("")
    assert caught.value.detail == {"limit": ["Must be an integer between 1 and 5."]}


class _Params(QueryParameters):
    limit = PositiveIntParam(maximum=5)


def test_a_parameters_400_is_the_one_its_field_raised():
    request = Request(RequestFactory().get("/v1/events?limit=9"))
    raised = ValidationError({"limit": ["no"]})
    with (
        mock.patch.object(_Params, "read", side_effect=raised),
        pytest.raises(ValidationError) as caught,
    ):
        _Params.parse(request)
    assert caught.value is raised
    with pytest.raises(ValidationError) as caught:
        _Params.parse(request)
    assert caught.value.detail == {"limit": ["Must be an integer between 1 and 5."]}
