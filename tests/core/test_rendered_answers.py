"""/v1 answers over HTTP are the bytes DRF's JSONRenderer wrote before orjson encoded them
(issue 18): text beyond ASCII, problem details, verification's answers, an indent asked for."""

from __future__ import annotations

import pytest
from djangorestframework_camel_case.render import CamelCaseJSONRenderer as LibraryRenderer

from tests.conftest import assert_problem
from tests.factories import ClientFactory

pytestmark = pytest.mark.django_db
QUOTED = "\N{LEFT SINGLE QUOTATION MARK}\u03a9\N{RIGHT SINGLE QUOTATION MARK}"
SHOWN = f"Frète Ünïon — {QUOTED} 🚚"
NAME = SHOWN + '\u2028second line\u2029\t"quoted" \\ end'


def _as_before(response) -> bytes:
    # The library's walk and DRF's json.dumps over the data this answer rendered.
    renderer_context = response.renderer_context
    return LibraryRenderer().render(response.data, response.accepted_media_type, renderer_context)


@pytest.fixture
def unicode_carrier(agency):
    return ClientFactory(agency=agency, client_name=NAME, dot="1234567")


def test_text_beyond_ascii_renders_as_before(api, unicode_carrier):
    for url in (
        f"/v1/clients/{unicode_carrier.id}",
        "/v1/clients",
        "/v1/coverages/clients?dot=1234567",
        "/v1/coverages/clients?dots=1234567&dots=7654321",
    ):
        response = api.get(url)
        assert response.status_code == 200, response.content
        assert response.content == _as_before(response)
        assert SHOWN.encode() in response.content
        assert b'\\u2028second line\\u2029\\t\\"quoted\\" \\\\ end' in response.content


def test_problem_details_render_as_before(api, unicode_carrier):
    for response, status in (
        (api.get("/v1/clients/999999"), 404),
        (api.post("/v1/clients", {"clientName": "", "dot": "Ω"}, format="json"), 400),
        (api.post("/v1/clients", b"{not json", content_type="application/json"), 400),
        (api.get("/v1/coverages/clients?dot=ünï"), 400),
    ):
        assert_problem(response, status)
        assert response.content == _as_before(response)


def test_an_indent_asked_for_renders_as_before(api, unicode_carrier):
    response = api.get(
        f"/v1/clients/{unicode_carrier.id}", HTTP_ACCEPT="application/json; indent=4"
    )
    assert response.status_code == 200
    assert response.content == _as_before(response)
    assert response.content.startswith(b'{\n    "id": ')
