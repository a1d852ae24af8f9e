"""Content negotiation's shortcut for a request that accepts anything gives DRF's answer."""

from __future__ import annotations

import pytest
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from apps.certificates.api.views import ClientCertificateView
from apps.core.negotiation import StrictContentNegotiation
from apps.core.renderers import CamelCaseJSONRenderer


@pytest.mark.parametrize(
    "query, accept",
    [
        ("", None),
        ("", "*/*"),
        ("", "application/json"),
        ("", "application/json; indent=4"),
        ("", "application/pdf"),
        ("", "*/*; q=0.5, application/pdf"),
        ("", "text/html"),
        ("?format=json", None),
        ("?format=pdf", "*/*"),
    ],
)
@pytest.mark.parametrize(
    "renderer_classes",
    [[CamelCaseJSONRenderer], ClientCertificateView.renderer_classes],
    ids=["json", "json-and-pdf"],
)
def test_the_same_renderer_and_media_type_as_drfs_negotiation(query, accept, renderer_classes):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get("/v1/anything" + query, **headers))
    renderers = [renderer() for renderer in renderer_classes]

    def answer(negotiation):
        try:
            renderer, media_type = negotiation.select_renderer(request, renderers)
        except NotAcceptable:
            return "406"
        except Exception as exc:  # the error itself is compared
            return type(exc).__name__
        return type(renderer), media_type

    ours = answer(StrictContentNegotiation())
    if "format=pdf" in query and len(renderers) == 1:
        # A view rendering only JSON takes no `format` (not DRF's 404): ignored.
        assert ours == (CamelCaseJSONRenderer, "application/json")
    else:
        assert ours == answer(DefaultContentNegotiation())


@pytest.mark.parametrize("query", ["?format=pdf", "?format=xml", "?format=json&format=pdf"])
def test_a_json_only_route_ignores_format_as_any_parameter_it_does_not_take(api, query):
    """The OpenAPI document gives `GET /v1/me` no `format` and no 400 (re-probe: 400 "Unknown
    format", and two `format`s answered by their order)."""
    answer = api.get("/v1/me" + query)
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json"


@pytest.mark.django_db
def test_a_route_of_two_formats_still_names_them_for_an_unknown_one(api):
    body = api.get("/v1/certificates/clients?id=1&format=xml").json()
    assert body["status"] == 400 and body["errors"][0]["field"] == "format"
