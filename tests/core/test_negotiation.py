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
        assert ours == "ValidationError"  # a 400 naming the formats, not DRF's 404
    else:
        assert ours == answer(DefaultContentNegotiation())
