"""Contract section 5: problem+json for every error under /v1."""

from __future__ import annotations

import pytest
from django.http import HttpResponse
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db


class ExplodingApiView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request):
        raise RuntimeError("secret internals")


def exploding_django_view(request):
    raise RuntimeError("secret internals")


def plain_form_view(request):
    return HttpResponse(str(len(request.POST)))


def fine_view(request):
    return HttpResponse("ok")


class EchoView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def post(self, request):
        return Response({"size": len(request.data)})


urlpatterns = [
    path("v1/boom", ExplodingApiView.as_view()),
    path("v1/plain-boom", exploding_django_view),
    path("v1/echo", EchoView.as_view()),
    path("v1/plain-form", plain_form_view),
]


@pytest.mark.parametrize("method", ["get", "post", "put", "delete", "patch"])
def test_unknown_route_is_problem_404_without_credentials(client, method):
    response = getattr(client, method)("/v1/no-such-thing")
    body = assert_problem(response, 404)
    assert "<html" not in response.content.decode().lower()
    assert body["title"] == "Not Found"


@pytest.mark.parametrize("path", ["/v1", "/v1?x=1", "/downloads", "/downloads?token=x"])
def test_the_api_roots_without_their_slash_are_problem_404(client, path):
    # Under /v1 "also for unknown routes" includes /v1 itself: it answered Django's HTML 404.
    response = client.get(path)
    body = assert_problem(response, 404)
    assert body["title"] == "Not Found"
    assert response["Cache-Control"] == "no-store"


def test_unknown_route_is_404_with_credentials(api):
    assert_problem(api.get("/v1/clients/1/nothing"), 404)


def test_wrong_method_is_405_with_allow(api):
    response = api.delete("/v1/clients")
    assert_problem(response, 405)
    assert "GET" in response["Allow"]


def test_unsupported_media_type_is_415(api, agency):
    response = api.post("/v1/clients", data="clientName=x", content_type="text/plain")
    assert_problem(response, 415)


def test_malformed_json_is_400(api):
    response = api.post("/v1/clients", data="{not json", content_type="application/json")
    assert_problem(response, 400)


@pytest.mark.urls("tests.core.test_errors")
def test_unexpected_failure_in_api_view_is_problem_500_without_traceback(client):
    client.raise_request_exception = False
    response = client.get("/v1/boom")
    body = assert_problem(response, 500)
    assert "secret internals" not in response.content.decode()
    assert "Traceback" not in body["detail"]


@pytest.mark.urls("tests.core.test_errors")
def test_unexpected_failure_in_plain_view_is_problem_500(client):
    client.raise_request_exception = False
    response = client.get("/v1/plain-boom")
    assert_problem(response, 500)
    assert "secret internals" not in response.content.decode()


@pytest.mark.urls("tests.core.test_errors")
def test_oversized_body_is_413(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = client.post("/v1/echo", data="x" * 4096, content_type="application/json")
    assert_problem(response, 413)


@pytest.mark.urls("tests.core.test_errors")
def test_too_many_form_fields_in_a_plain_view_is_problem_400(client):
    # Django's own 400 for a suspicious request, raised inside a view: never a 500.
    client.raise_request_exception = False
    fields = {f"f{i}": "x" for i in range(1001)}
    body = assert_problem(client.post("/v1/plain-form", fields), 400)
    assert body["detail"] == "Too many fields: at most 1000 are accepted."


def test_health_and_readiness_need_no_credentials(client):
    from apps.events.worker import heartbeat

    heartbeat(worker_id="test-worker")  # a worker is running
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {
        "database": "ok",
        "storage": "ok",
        "cache": "ok",
        "worker": "ok",
    }


def test_schema_and_docs_need_no_credentials(client):
    schema = client.get("/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    docs = client.get("/v1/docs")
    assert docs.status_code == 200
    assert b"cdn" not in docs.content.lower()


@pytest.mark.django_db
@pytest.mark.parametrize("cause", ["DeadlockDetected", "SerializationFailure"])
def test_a_write_conflict_is_a_503_to_send_again_not_an_unavailable_database(
    api, carrier, monkeypatch, cause
):
    # PostgreSQL rolled the write back whole (two writes to the same records at once): the
    # database is up, and the same request sent again goes through.
    import psycopg
    from django.db import OperationalError

    from apps.clients.api.views import ClientViewSet

    def conflicted(**kwargs):
        error = OperationalError("deadlock detected")
        error.__cause__ = getattr(psycopg.errors, cause)()
        raise error

    monkeypatch.setattr(ClientViewSet, "update_service", staticmethod(conflicted))
    api.raise_request_exception = False  # a 5xx is reported (logged), then answered
    body = assert_problem(api.put(f"/v1/clients/{carrier.id}", {"phone": "1"}, format="json"), 503)
    assert body["detail"].startswith("A concurrent write to the same records conflicted")
    response = api.put(f"/v1/clients/{carrier.id}", {"phone": "1"}, format="json")
    assert response["Retry-After"] == "1"
