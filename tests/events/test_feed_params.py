"""The event feed's query parameters, exactly as they answer over HTTP: empty values, repeated
types, the order in which a bad parameter is named, and the 400s' wording. Written before the
feed moved to a QueryParameters class; they held before and after."""

from __future__ import annotations

import pytest

from apps.clients.services import client_update
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db
BIG = "9223372036854775807"


@pytest.fixture
def history(manager, carrier):
    """Three client.updated events of the caller's agency."""
    for n in range(3):
        client_update(user=manager, instance=carrier, client_name=f"Name {n}")
    return carrier


def types(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [event["type"] for event in response.json()["results"]]


def errors(response) -> list[dict]:
    """The 400's errors; its detail says the same in one line."""
    body = assert_problem(response, 400)
    assert body["detail"] == "; ".join(f"{e['field']}: {e['message']}" for e in body["errors"])
    return body["errors"]


def error(field: str, message: str, code: str = "invalid") -> list[dict]:
    return [{"field": field, "message": message, "code": code}]


@pytest.mark.parametrize(
    "query",
    [
        "type=client.updated&type=",  # an empty last value does not drop the first
        "type=&type=client.updated",
        "type=client.updated&type=&type=",
        "type=client.updated&type=client.updated",
    ],
)
def test_empty_and_repeated_types_keep_the_sent_ones(api, history, query):
    assert types(api.get(f"/v1/events?{query}")) == ["client.updated"] * 3
    assert types(api.get(f"/v1/events?{query.replace('client.updated', 'policy.created')}")) == []


@pytest.mark.parametrize("query", ["type=", "type=&type=", "limit=", "after=", "clientId="])
def test_empty_values_are_not_sent(api, history, query):
    assert types(api.get(f"/v1/events?{query}")) == ["client.updated"] * 3


def test_limit_is_digits_alone_and_bounded(api, history):
    assert types(api.get("/v1/events?limit=2")) == ["client.updated"] * 2
    assert types(api.get("/v1/events?limit=500")) == ["client.updated"] * 3
    message = "Must be an integer between 1 and 500."
    for bad in ("0", "501", "-1", "1.5", "x", "\uff11", "1_0", "9" * 30, " 2 ", "2\n"):
        assert errors(api.get("/v1/events", {"limit": bad})) == error("limit", message), bad


def test_client_id_wording_and_bounds(api, history, rival):
    assert types(api.get("/v1/events", {"clientId": history.id})) == ["client.updated"] * 3
    assert types(api.get("/v1/events", {"clientId": rival.id})) == []
    assert types(api.get("/v1/events", {"clientId": BIG})) == []
    message = f"Must be an integer between 1 and {BIG}."
    for bad in ("0", "x", "-3", "9223372036854775808", "\uff11", f" {history.id} "):
        assert errors(api.get("/v1/events", {"clientId": bad})) == error("clientId", message), bad


def test_unknown_types_name_the_first_in_sorted_order(api, history):
    response = api.get("/v1/events?type=client.updated&type=zz.bad&type=aa.bad")
    assert errors(response) == error("type", "Unknown event type: aa.bad.")
    body = assert_problem(api.get("/v1/events?type=nope"), 400)
    assert body["detail"] == "type: Unknown event type: nope."


def test_the_first_bad_parameter_is_named(api, history):
    bad_limit = errors(api.get("/v1/events?after=x&type=nope&clientId=x&limit=0"))
    assert bad_limit == error("limit", "Must be an integer between 1 and 500.")
    bad_after = errors(api.get("/v1/events?after=x&type=nope&clientId=x"))
    assert bad_after == error("after", "Not a cursor of this feed.")
    bad_type = errors(api.get("/v1/events?type=nope&clientId=x"))
    assert bad_type == error("type", "Unknown event type: nope.")


@pytest.mark.parametrize("query", ["limit=1&limit=2", "after=a&after=b", "clientId=1&clientId=1"])
def test_single_valued_parameters_refuse_repeats(api, history, query):
    name = query.split("=")[0]
    assert errors(api.get(f"/v1/events?{query}")) == error(
        name, "Send this parameter once.", "repeated"
    )


def test_next_echoes_the_cursor_as_sent_when_nothing_follows(api, history):
    first = api.get("/v1/events?limit=3").json()
    assert first["next"] and len(first["results"]) == 3
    padded = first["next"] + "=" * (-len(first["next"]) % 4)
    for cursor in (first["next"], padded):
        body = api.get("/v1/events", {"after": cursor}).json()
        assert body == {"results": [], "next": cursor}
    assert api.get("/v1/events", {"type": "policy.created"}).json() == {
        "results": [],
        "next": None,
    }
