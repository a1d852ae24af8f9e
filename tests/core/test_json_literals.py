"""A /v1 JSON body follows RFC 8259 (docs/api_intro.md): `NaN`, `Infinity` and `-Infinity` are
no JSON values. Python's json.loads reads them as floats, so `{"pageIndex": 1, "agencyId": NaN}`
was a 200 on POST /v1/drivers/search; such a body is now the 400 "JSON parse error" any invalid
JSON is, on every JSON endpoint (they share one parser)."""

from __future__ import annotations

import pytest

from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

LITERALS = ["NaN", "Infinity", "-Infinity"]


def send_json(api, path: str, text: str, method: str = "POST"):
    """`text` sent as it is (the test client would encode a Python value as valid JSON)."""
    return api.generic(method, path, text.encode(), content_type="application/json")


@pytest.mark.parametrize("literal", LITERALS)
def test_a_non_standard_literal_in_a_search_body_is_a_parse_error(api, carrier, literal):
    response = send_json(api, "/v1/drivers/search", f'{{"pageIndex": 1, "agencyId": {literal}}}')
    detail = assert_problem(response, 400)["detail"]
    assert detail.startswith("JSON parse error - ") and literal in detail


@pytest.mark.parametrize("literal", LITERALS)
def test_a_non_standard_literal_nested_anywhere_is_a_parse_error(api, carrier, literal):
    body = f'{{"pageIndex": 1, "filter": {{"clientId": [1, {literal}]}}}}'
    response = send_json(api, "/v1/policies/search", body)
    assert "JSON parse error" in assert_problem(response, 400)["detail"]


def test_a_non_standard_literal_on_a_write_is_a_parse_error_and_writes_nothing(api, carrier):
    body = '{"clientName": "Renamed", "producerId": NaN}'
    response = send_json(api, f"/v1/clients/{carrier.id}", body, "PUT")
    assert "JSON parse error" in assert_problem(response, 400)["detail"]
    carrier.refresh_from_db()
    assert carrier.client_name == "Lone Star Freight"


def test_the_words_inside_a_string_are_text(api, carrier):
    body = '{"clientName": "NaN Infinity Freight"}'
    response = send_json(api, f"/v1/clients/{carrier.id}", body, "PUT")
    assert response.status_code == 200, response.content
    assert response.json()["clientName"] == "NaN Infinity Freight"
