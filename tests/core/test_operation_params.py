"""Only the query parameters an operation takes are judged (contract sections 1 and 13): one of
them that takes one value, sent twice, is a 400; a parameter the operation does not take is
ignored, repeated or not, as it is sent once. `GET /v1/me?foo=1&foo=2` answered 400 "foo: Send
this parameter once." though `/v1/me` takes no parameter and declares no 400.

The parameters an operation takes are apps.core.query_params.operation_query_parameters's; the
last test holds them to the OpenAPI document's, operation by operation."""

from __future__ import annotations

import re

import pytest
from django.urls import resolve

from apps.core.query_params import operation_query_parameters
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/v1/me?foo=1&foo=2",
        "/v1/events?page=1&page=1",
        "/v1/clients/{client}?name=a&name=b",
        "/v1/coverages/clients?dot=1234567&page=1&page=2",
        "/v1/me?foo=a%00b",
    ],
)
def test_a_parameter_the_operation_does_not_take_is_ignored_repeated_or_not(api, carrier, path):
    url = path.format(client=carrier.id)
    response = api.get(url)
    assert response.status_code == 200, response.content
    assert response.json() == api.get(url.split("?")[0] + "?" + _declared_only(url)).json()


def _declared_only(url: str) -> str:
    # The same request without the parameters the operation does not take.
    path, _, query = url.partition("?")
    taken = operation_query_parameters(resolve(path).func, "GET")
    return "&".join(piece for piece in query.split("&") if piece.split("=")[0] in taken)


def test_a_parameter_the_operation_takes_once_is_still_refused_twice(api, carrier):
    refused = assert_problem(api.get("/v1/coverages/clients?dot=1234567&dot=1234567"), 400)
    assert [(e["field"], e["code"]) for e in refused["errors"]] == [("dot", "repeated")]
    refused = assert_problem(api.get("/v1/events?limit=1&limit=1&page=1&page=2"), 400)
    assert [(e["field"], e["code"]) for e in refused["errors"]] == [("limit", "repeated")]


def test_a_legacy_search_filter_the_list_does_not_take_is_ignored_as_a_list(api, carrier):
    body = {"filter": {"nickname": ["a", "b"], "clientId": carrier.id}}
    response = api.post("/v1/policies/search", body, format="json")
    assert response.status_code == 200, response.content


@pytest.fixture(scope="module")
def documented(django_db_blocker):
    """(path, method, {query parameter: whether it is an array}) of every /v1 operation of the
    OpenAPI document."""
    from drf_spectacular.generators import SchemaGenerator

    with django_db_blocker.unblock():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    found = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            parameters = {
                p["name"]: p["schema"].get("type") == "array"
                for p in operation.get("parameters", [])
                if p["in"] == "query"
            }
            found.append((path, method.upper(), parameters))
    return found


def test_the_parameters_judged_are_the_documented_ones_on_every_operation(documented):
    assert len(documented) > 50
    wrong = []
    for path, method, parameters in documented:
        view = resolve(re.sub(r"\{[^}]+\}", "1", path)).func
        judged = dict(operation_query_parameters(view, method))
        if judged != parameters:
            wrong.append((method, path, judged, parameters))
    assert wrong == [], "\n".join(map(str, wrong))
