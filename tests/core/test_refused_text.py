"""A JSON body's strings are text: one holding a lone surrogate or NUL is a 400 naming its path,
before any field or view reads it (apps.core.parsers.refused_strings); a query parameter's
value holding NUL is a 400 naming the parameter (apps.core.query_params)."""

from __future__ import annotations

import json

import pytest

from apps.clients.models import Client
from tests.conftest import assert_problem
from tests.coverages.conftest import VIN

pytestmark = pytest.mark.django_db

LONE = "\ud800"  # a high surrogate with no low one after it: not a character


def send(api, method: str, path: str, body):
    # json.dumps writes a lone surrogate as its escape, as a client's JSON library would; the
    # test client's own renderer cannot encode one.
    return getattr(api, method)(path, json.dumps(body), content_type="application/json")


# Each answered 500: a 400 echoing the value could not be encoded, or the database refused it.
CASES = [
    ("/v1/coverages/vehicles/batch", {"vins": [LONE]}, "vins.0"),
    ("/v1/coverages/vehicles/batch", {"licensePlates": ["TX-1", "\udfff"]}, "licensePlates.1"),
    ("/v1/policies", {"limits": [{"name": f"CSL{LONE}", "amount": "1.00"}]}, "limits.0.name"),
    ("/v1/clients", {"clientName": "Lone Star", "city": LONE}, "city"),
    ("/v1/vehicles", {"makeCompanyName": LONE}, "makeCompanyName"),
    ("/v1/drivers", {"driverType": LONE}, "driverType"),
    ("/v1/policies/search", {"filter": {"insurerName": LONE}}, "filter.insurerName"),
    ("/v1/drivers/search", {"sortOrder": LONE}, "sortOrder"),
    ("/v1/webhooks", {"eventTypes": ["policy.created", LONE]}, "eventTypes.1"),
    ("/v1/clients", {"clientName": "Lone Star", LONE: "x"}, "\\ud800"),
]


@pytest.mark.parametrize(("path", "body", "field"), CASES)
def test_a_lone_surrogate_is_a_400_naming_its_path(api, carrier, path, body, field):
    clients = Client.objects.count()
    refused = assert_problem(send(api, "post", path, body), 400)
    # Only it: the parser refused the body before any field was validated.
    assert [(e["field"], e["code"]) for e in refused["errors"]] == [(field, "invalid")]
    assert "surrogate" in refused["errors"][0]["message"]
    assert Client.objects.count() == clients


def test_an_update_with_a_lone_surrogate_changes_nothing(api, carrier):
    response = send(api, "put", f"/v1/clients/{carrier.id}", {"clientName": f"New{LONE}"})
    assert [e["field"] for e in assert_problem(response, 400)["errors"]] == ["clientName"]
    carrier.refresh_from_db()
    assert carrier.client_name == "Lone Star Freight"


def test_a_surrogate_pair_is_the_character_it_encodes(api, carrier):
    response = send(api, "put", f"/v1/clients/{carrier.id}", {"clientName": "Lone Star \U0001f69a"})
    assert response.status_code == 200, response.content
    assert response.json()["clientName"] == "Lone Star \U0001f69a"


# PostgreSQL's text cannot hold NUL: a lookup that sent one to the database answered its
# DataError as 503 "The database is unavailable" (SQLite answered 400, each field its own way).
NUL = "Text cannot hold the NUL character (\\u0000)."

NUL_IN_BODIES = [
    ("/v1/coverages/vehicles/batch", {"vins": [VIN], "profile": "a\u0000b"}, "profile"),
    ("/v1/vehicles", {"makeCompanyName": "a\u0000b"}, "makeCompanyName"),
    ("/v1/clients", {"clientName": "Lone Star", "state": "T\u0000X"}, "state"),
    ("/v1/policies", {"limits": [{"name": "\u0000", "amount": "1.00"}]}, "limits.0.name"),
    ("/v1/webhooks", {"eventTypes": ["policy.created\u0000"]}, "eventTypes.0"),
]


@pytest.mark.parametrize(("path", "body", "field"), NUL_IN_BODIES)
def test_nul_in_a_body_is_a_400_naming_its_path(api, carrier, path, body, field):
    refused = assert_problem(send(api, "post", path, body), 400)
    assert [(e["field"], e["message"]) for e in refused["errors"]] == [(field, NUL)]


NUL_IN_QUERIES = [
    ("/v1/coverages/clients?dot=1234567&profile=%00", "profile"),
    (f"/v1/coverages/vehicles?vin={VIN}&profile=a%00b", "profile"),
    ("/v1/coverages/vehicles?licensePlate=TX-4821A&licensePlateState=T%00X", "licensePlateState"),
    ("/v1/certificates/vehicles?licensePlate=TX%004821A", "licensePlate"),
    ("/v1/vehicles?make=Volvo%00", "make"),
    ("/v1/drivers?licenseState=T%00X", "licenseState"),
]


@pytest.mark.parametrize(("query", "parameter"), NUL_IN_QUERIES)
def test_nul_in_a_query_parameter_is_a_400_naming_it(api, carrier, query, parameter):
    refused = assert_problem(api.get(query), 400)
    assert [(e["field"], e["message"]) for e in refused["errors"]] == [(parameter, NUL)]


@pytest.mark.parametrize("charset", ["utf-16", "utf-32", "utf-7"])
@pytest.mark.parametrize("text", ["a\x00b", LONE], ids=["nul", "lone-surrogate"])
def test_a_body_in_another_charset_is_read_as_utf8(api, carrier, charset, text):
    # A body is UTF-8 whatever its charset says (tests/core/test_body_charset.py): UTF-16 and
    # UTF-32 are no UTF-8 (a 400 JSON parse error, on no field); UTF-7's bytes are ASCII, read
    # as UTF-8 the backslash of the escape stays "+AFw-", so the profile is a name no profile
    # has (a 400 on it). No NUL reaches the profile lookup (PostgreSQL's DataError, a 503).
    body = json.dumps({"vins": [VIN], "profile": text}).encode(charset)
    response = api.post(
        "/v1/coverages/vehicles/batch", body, content_type=f"application/json; charset={charset}"
    )
    refused = assert_problem(response, 400)
    fields = [e["field"] for e in refused["errors"]]
    assert fields == (["profile"] if charset == "utf-7" else [])


def test_a_body_in_an_unknown_charset_is_read_as_utf8(api, carrier):
    response = api.post(
        "/v1/coverages/vehicles/batch",
        b'{"vins": []}',
        content_type="application/json; charset=x-no",
    )
    assert [e["field"] for e in assert_problem(response, 400)["errors"]] == ["vins"]
