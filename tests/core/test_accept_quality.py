"""An `Accept` header's quality values choose the representation (RFC 9110 12.5.1): the highest
q wins, then the more specific range, then the route's own order; q=0 means "not this", so a
route with nothing else acceptable answers 406 problem+json. Before, only the ranges'
specificity counted: `application/json;q=0, application/pdf` was answered in JSON."""

from __future__ import annotations

import pytest

from tests.conftest import assert_problem
from tests.factories import PolicyFactory

pytestmark = pytest.mark.django_db

JSON, PDF = "application/json", "application/pdf"


@pytest.fixture
def certificate(carrier) -> str:
    PolicyFactory(client=carrier)
    return f"/v1/certificates/clients?id={carrier.id}"


@pytest.mark.parametrize(
    ("accept", "chosen"),
    [
        ("application/json;q=0, application/pdf", PDF),
        ("application/pdf, application/json;q=0.5", PDF),
        ("application/json;q=0.5, application/pdf", PDF),
        ("application/json; Q=0, application/pdf", PDF),
        ("application/pdf;q=0.5, application/json", JSON),
        ("*/*;q=0.1, application/pdf;q=0.2", PDF),
        # The most specific range that names a type decides its q: JSON is 0.1, PDF 0.9.
        ("application/*;q=0.9, application/json;q=0.1", PDF),
        ("*/*, application/json;q=0", PDF),
        # Equal q: the more specific range, then the route's order (JSON first).
        ("*/*, application/pdf", PDF),
        ("application/pdf;q=0.5, */*;q=0.5", PDF),
        ("application/json, application/pdf", JSON),
        ("application/pdf, application/json", JSON),
        ("*/*", JSON),
    ],
)
def test_a_certificate_is_answered_in_the_most_wanted_representation(
    api, certificate, accept, chosen
):
    response = api.get(certificate, HTTP_ACCEPT=accept)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].split(";")[0] == chosen


@pytest.mark.parametrize(
    "accept",
    [
        "application/json;q=0, application/pdf;q=0",
        "application/*;q=0",
        "*/*;q=0",
        "application/json;q=0, application/pdf;q=0, text/html",
    ],
)
def test_a_certificate_nothing_acceptable_is_406(api, certificate, accept):
    assert_problem(api.get(certificate, HTTP_ACCEPT=accept), 406)


@pytest.mark.parametrize(
    "accept",
    [
        "application/json;q=0",
        "application/json;q=0, */*",
        "application/json;q=0.0, text/html",
        "*/*;q=0",
        "application/pdf",
    ],
)
def test_a_json_route_whose_json_is_refused_is_406(api, carrier, accept):
    assert_problem(api.get("/v1/clients", HTTP_ACCEPT=accept), 406)
    assert_problem(api.get(f"/v1/clients/{carrier.id}", HTTP_ACCEPT=accept), 406)


@pytest.mark.parametrize(
    "accept",
    [
        "text/html, application/json;q=0.1",
        "application/json;q=0.001",
        "application/json;q=1.000",
        "application/pdf, */*;q=0.5",
        "application/json;q=abc",  # not a qvalue: as if there were none
    ],
)
def test_a_json_route_answers_json_when_it_is_acceptable_at_all(api, carrier, accept):
    response = api.get(f"/v1/clients/{carrier.id}", HTTP_ACCEPT=accept)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith(JSON)
    assert response.json()["id"] == carrier.id
