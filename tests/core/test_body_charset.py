"""A /v1 body is UTF-8, whatever charset its Content-Type names (RFC 8259 section 11: JSON
exchanged between systems is UTF-8, and application/json defines no charset parameter; RFC
7578 defines none for multipart/form-data either). The parameter is accepted and ignored: the
bytes of `{"clientName": "Café Freight"}` sent with `charset=latin-1` were stored as
"CafÃ© Freight", and a charset naming no text codec (`bz2_codec`) failed with a 500."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import encode_multipart

from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

CAFE = '{"clientName": "Caf\u00e9 Freight"}'.encode()  # UTF-8 bytes, as every client sends


@pytest.mark.parametrize(
    "charset", ["latin-1", "utf-8", "UTF-8", "utf-16", "cp1252", "bz2_codec", "x-unknown"]
)
def test_a_json_body_is_read_as_utf8_whatever_the_charset_says(api, carrier, charset):
    response = api.generic(
        "PUT",
        f"/v1/clients/{carrier.id}",
        CAFE,
        content_type=f"application/json; charset={charset}",
    )
    assert response.status_code == 200, response.content
    assert response.json()["clientName"] == "Caf\u00e9 Freight"
    carrier.refresh_from_db()
    assert carrier.client_name == "Caf\u00e9 Freight"


def test_a_json_body_that_is_not_utf8_is_400_and_changes_nothing(api, carrier):
    latin = '{"clientName": "Caf\u00e9 Freight"}'.encode("latin-1")
    response = api.generic(
        "PUT",
        f"/v1/clients/{carrier.id}",
        latin,
        content_type="application/json; charset=latin-1",
    )
    assert "JSON parse error" in assert_problem(response, 400)["detail"]
    carrier.refresh_from_db()
    assert carrier.client_name == "Lone Star Freight"


def test_form_fields_are_read_as_utf8_whatever_the_charset_says(api, carrier):
    boundary = "BoUnDaRy"
    body = encode_multipart(
        boundary,
        {
            "clientId": str(carrier.id),
            "description": "Caf\u00e9 receipt",
            "file": SimpleUploadedFile("a.pdf", b"%PDF-1.4\n%demo\n"),
        },
    )
    response = api.generic(
        "POST",
        "/v1/documents/clients",
        body,
        content_type=f"multipart/form-data; boundary={boundary}; charset=latin-1",
    )
    assert response.status_code == 201, response.content
    assert response.json()["description"] == "Caf\u00e9 receipt"
