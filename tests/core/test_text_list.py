"""`StrictTextListField` takes a clean list as it is and leaves everything else to DRF's walk of
its child field: for any input, the same value or the same errors as
`ListField(child=StrictCharField(max_length=...))` (issue 18: the batch's input cost)."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from apps.core.serializers import StrictCharField, StrictTextListField

INPUTS = [
    [],
    ["1FUJGLDR7CLBP8834", "abc"],
    ["12345"],
    ["123456"],
    [" padded ", "x"],
    ["tab\t"],
    [""],
    ["   "],
    ["nul\x00"],
    [7, "x", None, True],
    [["nested"]],
    "not-a-list",
    {"a": "b"},
    ("tuple", "ok"),
    None,
]


def _outcome(field, data):
    try:
        return "ok", field.run_validation(data)
    except serializers.ValidationError as exc:
        return "error", exc.detail


@pytest.mark.parametrize("data", INPUTS)
def test_the_same_value_or_errors_as_drf(data):
    fast = StrictTextListField(max_length=5)
    drf = serializers.ListField(child=StrictCharField(max_length=5))
    assert _outcome(fast, data) == _outcome(drf, data)


def test_a_clean_list_is_returned_as_a_new_list():
    data = ["a", "bb"]
    value = StrictTextListField(max_length=5).run_validation(data)
    assert value == data and value is not data


def test_a_bad_item_in_a_batch_is_named_by_its_index(api):
    body = {"vins": ["1FUJGLDR7CLBP8834", 7, "x" * 65], "licensePlates": [" ok ", ""]}
    response = api.post("/v1/coverages/vehicles/batch", body, format="json")
    assert response.status_code == 400
    errors = {(e["field"], e["message"]) for e in response.json()["errors"]}
    assert ("vins.1", "Expected a string.") in errors
    assert ("vins.2", "Ensure this field has no more than 64 characters.") in errors
    assert ("licensePlates.1", "This field may not be blank.") in errors
