"""A body over its route's limit (2.5 MiB, 2,621,440 bytes; on an upload route a form of a
25 MiB file and 64 KiB) is a 413 on every /v1 route that takes a body, before the view acts,
with or without a Content-Length. The limit was Django's, checked only where a view read the
body: `POST /v1/webhooks/{id}/ping` with 3,000,000 bytes answered 202 and queued a ping.

A route that takes no body (ping, rotate-secret, redeliver: the OpenAPI document shows no
request body) reads none: an empty one or JSON is ignored, as always, and a body of another
type, which the document's 415 promises to refuse, is a 415."""

from __future__ import annotations

import io
import re

import pytest
from django.conf import settings

from apps.core.request_bodies import MAX_MULTIPART_BYTES
from apps.webhooks.models import Webhook, WebhookDelivery
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

LIMIT = 2_621_440


@pytest.fixture
def hook(api, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    response = api.post("/v1/webhooks", {"url": "http://127.0.0.1:9/hook"}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _chunked(api, method: str, path: str, body: bytes, content_type: str):
    source = io.BytesIO(body)
    response = api.generic(
        method,
        path,
        b"",
        content_type=content_type,
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": source},
    )
    return response, source.tell()


def test_the_limit_is_the_documented_one():
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == LIMIT


@pytest.mark.parametrize("content_type", ["text/plain", "application/json"])
def test_a_body_past_the_limit_to_ping_is_413_and_queues_nothing(api, hook, content_type):
    path = f"/v1/webhooks/{hook['id']}/ping"
    response = api.generic("POST", path, b"\0" * 3_000_000, content_type=content_type)
    assert_problem(response, 413)
    response, read = _chunked(api, "POST", path, b"\0" * 3_000_000, content_type)
    assert_problem(response, 413)
    assert read <= LIMIT + 64 * 1024  # not the whole body
    assert not WebhookDelivery.objects.exists()


def test_a_body_of_exactly_the_limit_is_taken(api, hook):
    path = f"/v1/webhooks/{hook['id']}/ping"
    response = api.generic("POST", path, b" " * LIMIT, content_type="application/json")
    assert response.status_code == 202, response.content[:300]
    response = api.generic("POST", path, b" " * (LIMIT + 1), content_type="application/json")
    assert_problem(response, 413)
    assert WebhookDelivery.objects.count() == 1


def test_a_rotation_with_a_body_past_the_limit_keeps_the_secret(api, hook):
    before = Webhook.objects.get(pk=hook["id"]).secret
    response = api.generic(
        "POST",
        f"/v1/webhooks/{hook['id']}/rotate-secret",
        b"x" * (LIMIT + 1),
        content_type="application/octet-stream",
    )
    assert_problem(response, 413)
    assert Webhook.objects.get(pk=hook["id"]).secret == before


@pytest.mark.parametrize(
    "content_type", ["text/plain", "multipart/form-data; boundary=x", "application/xml"]
)
def test_a_body_of_another_type_to_a_route_that_takes_none_is_415(api, hook, content_type):
    path = f"/v1/webhooks/{hook['id']}/ping"
    response = api.generic("POST", path, b"hello", content_type=content_type)
    assert_problem(response, 415)
    response, _ = _chunked(api, "POST", path, b"hello", content_type)
    assert_problem(response, 415)
    assert not WebhookDelivery.objects.exists()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"", "text/plain"),
        (b"", "application/octet-stream"),
        (b"{}", "application/json"),
        (b'{"a": 1}', "application/json; charset=utf-8"),
    ],
)
def test_an_empty_or_json_body_to_a_route_that_takes_none_is_ignored(api, hook, body, content_type):
    path = f"/v1/webhooks/{hook['id']}/ping"
    response = api.generic("POST", path, body, content_type=content_type)
    assert response.status_code == 202, response.content


def test_a_caller_without_a_valid_api_key_gets_its_401_first(client, hook):
    response = client.generic(
        "POST", f"/v1/webhooks/{hook['id']}/ping", b"x" * (LIMIT + 1), content_type="text/plain"
    )
    assert_problem(response, 401)


@pytest.fixture(scope="module")
def body_operations(django_db_blocker):
    """(method, path, whether the OpenAPI document shows a request body) of every /v1
    operation with a body method."""
    from drf_spectacular.generators import SchemaGenerator

    with django_db_blocker.unblock():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (method.upper(), re.sub(r"\{[^}]+\}", "1", path), "requestBody" in operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if method.upper() in ("POST", "PUT", "PATCH")
    ]


def test_every_route_refuses_a_body_past_its_limit(api, body_operations):
    assert len(body_operations) > 20
    wrong = []
    for method, path, _ in body_operations:
        too_big = b" " * (LIMIT + 1)
        response = api.generic(method, path, too_big, content_type="application/json")
        if response.status_code != 413:
            wrong.append((method, path, "json", response.status_code))
        form = "multipart/form-data; boundary=x"
        response = api.generic(
            method, path, b"--x--", content_type=form, CONTENT_LENGTH=str(MAX_MULTIPART_BYTES + 1)
        )
        if response.status_code != 413:
            wrong.append((method, path, "form", response.status_code))
    assert wrong == []


def test_the_routes_that_refuse_a_body_are_the_ones_documented_without_one(api, body_operations):
    without = sorted((method, path) for method, path, has_body in body_operations if not has_body)
    assert [path.rsplit("/", 1)[-1] for _, path in without] == [
        "redeliver",
        "ping",
        "rotate-secret",
    ]
    for method, path in without:
        assert_problem(api.generic(method, path, b"hello", content_type="text/plain"), 415)
        # A body with no Content-Type is no JSON either (re-probe: it rotated the secret).
        assert_problem(api.generic(method, path, b"hello", content_type=""), 415)
