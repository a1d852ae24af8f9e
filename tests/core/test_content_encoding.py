"""A request body with a Content-Encoding other than identity is a 415 naming it, on every /v1
route that takes a body, before anything is read or written (RFC 9110 section 15.5.16). The
service decodes no content coding: a gzip body labelled `Content-Encoding: gzip` answered a
400 "JSON parse error ... 0x8b", and a plain body labelled `br` a 201, read as if it were not
encoded."""

from __future__ import annotations

import gzip
import io
import json
import re

import pytest
from rest_framework.test import APIClient

from apps.clients.models import Client
from apps.documents.models import Document
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db


def _client_body(agency) -> bytes:
    return json.dumps({"clientName": "Encoded Freight", "agencyId": agency.id}).encode()


@pytest.mark.parametrize(
    ("coding", "encode"),
    [("gzip", gzip.compress), ("br", lambda body: body), ("GZIP, identity", gzip.compress)],
)
def test_an_encoded_body_is_415_naming_the_coding_and_writes_nothing(api, agency, coding, encode):
    response = api.generic(
        "POST",
        "/v1/clients",
        encode(_client_body(agency)),
        content_type="application/json",
        HTTP_CONTENT_ENCODING=coding,
    )
    refused = assert_problem(response, 415)
    assert coding.split(",")[0].lower() in refused["detail"]
    assert "identity" in refused["detail"]
    assert not Client.objects.filter(client_name="Encoded Freight").exists()


@pytest.mark.parametrize("coding", ["identity", "IDENTITY", " identity "])
def test_identity_is_no_coding(api, agency, coding):
    response = api.generic(
        "POST",
        "/v1/clients",
        _client_body(agency),
        content_type="application/json",
        HTTP_CONTENT_ENCODING=coding,
    )
    assert response.status_code == 201, response.content


def test_an_update_with_an_encoded_body_changes_nothing(api, carrier):
    response = api.generic(
        "PUT",
        f"/v1/clients/{carrier.id}",
        gzip.compress(b'{"clientName": "X"}'),
        content_type="application/json",
        HTTP_CONTENT_ENCODING="gzip",
    )
    assert_problem(response, 415)
    carrier.refresh_from_db()
    assert carrier.client_name == "Lone Star Freight"


def test_an_encoded_upload_is_415_and_stores_nothing(api, carrier):
    boundary = "zzz"
    form = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="clientId"\r\n\r\n{carrier.id}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n'
        f"Content-Type: application/pdf\r\n\r\n%PDF-1.4\n\r\n--{boundary}--\r\n"
    ).encode()
    response = api.generic(
        "POST",
        "/v1/documents/clients",
        gzip.compress(form),
        content_type=f"multipart/form-data; boundary={boundary}",
        HTTP_CONTENT_ENCODING="gzip",
    )
    assert_problem(response, 415)
    assert not Document.objects.exists()


def test_an_encoded_chunked_body_is_415_without_being_read(api):
    class Counting(io.RawIOBase):
        read_bytes = 0

        def readable(self):
            return True

        def readinto(self, buffer):
            buffer[: len(buffer)] = b" " * len(buffer)
            self.read_bytes += len(buffer)
            return len(buffer)

    source = Counting()
    response = api.generic(
        "POST",
        "/v1/clients",
        b"",
        content_type="application/json",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        HTTP_CONTENT_ENCODING="gzip",
        **{"wsgi.input": source},
    )
    assert_problem(response, 415)
    assert source.read_bytes == 0


def test_a_caller_without_a_valid_api_key_gets_its_401_first(agency):
    response = APIClient().generic(
        "POST",
        "/v1/clients",
        gzip.compress(_client_body(agency)),
        content_type="application/json",
        HTTP_CONTENT_ENCODING="gzip",
    )
    assert_problem(response, 401)


@pytest.fixture(scope="module")
def body_operations(django_db_blocker):
    """(method, path) of every /v1 operation that takes a body, from the OpenAPI document."""
    from drf_spectacular.generators import SchemaGenerator

    with django_db_blocker.unblock():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (method.upper(), re.sub(r"\{[^}]+\}", "1", path))
        for path, operations in schema["paths"].items()
        for method in operations
        if method.upper() in ("POST", "PUT", "PATCH")
    ]


def test_every_route_that_takes_a_body_refuses_an_encoded_one(api, body_operations):
    assert len(body_operations) > 20
    wrong = []
    for method, path in body_operations:
        response = api.generic(
            method,
            path,
            gzip.compress(b"{}"),
            content_type="application/json",
            HTTP_CONTENT_ENCODING="gzip",
        )
        if response.status_code != 415:
            wrong.append((method, path, response.status_code))
    assert wrong == []
