"""Every integer in a query (and a legacy search's `filter`, which stands for the query) is
ASCII digits only (contract section 13): white space around the digits is no more an integer
than a sign is. Over HTTP, on every kind of reader: the list filters' ids, the parameters of
the views that parse their own (documents, certificates, verification, the event feed), and
the paging numbers."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import PolicyFactory

pytestmark = pytest.mark.django_db

# (path, parameter, what the plain value is): the value is a fixture's id, or a number.
QUERIES = [
    ("/v1/drivers", "clientId", "carrier"),
    ("/v1/policies", "clientId", "carrier"),
    ("/v1/vehicles", "clientId", "carrier"),
    ("/v1/vehicles", "policyId", "policy"),
    ("/v1/clients", "agencyId", "agency"),
    ("/v1/documents/clients", "clientId", "carrier"),
    ("/v1/documents/policies", "policyId", "policy"),
    ("/v1/coverages/clients", "id", "carrier"),
    ("/v1/events", "clientId", "carrier"),
    ("/v1/events", "limit", 5),
    ("/v1/clients", "page", 1),
    ("/v1/clients", "limit", 5),
    ("/v1/documents/clients?clientId={carrier}&", "page", 1),
    ("/v1/documents/clients?clientId={carrier}&", "limit", 5),
]
# (legacy search, filter key)
FILTERS = [("/v1/policies/search", "clientId"), ("/v1/drivers/search", "clientId")]
SPACED = ["{} ", " {}", "\t{}", "{}\t", "\n{}", "{}\n", "\r\n{}", " {} "]


@pytest.fixture
def known(agency, carrier):
    return {"agency": agency.id, "carrier": carrier.id, "policy": PolicyFactory(client=carrier).id}


def _get(api, known, path, parameter, value):
    path = path.format(**known)
    joiner = "" if path.endswith("&") else "?"
    return api.get(f"{path}{joiner}{parameter}={quote(value, safe='')}")


def _plain(known, what) -> str:
    return str(known[what] if isinstance(what, str) else what)


@pytest.mark.parametrize("around", SPACED, ids=repr)
@pytest.mark.parametrize(("path", "parameter", "what"), QUERIES)
def test_a_query_integer_with_white_space_is_400(api, known, path, parameter, what, around):
    plain = _plain(known, what)
    body = assert_problem(_get(api, known, path, parameter, around.format(plain)), 400)
    # The message of any integer that is not one (a sign), naming the parameter.
    signed = assert_problem(_get(api, known, path, parameter, "+" + plain), 400)
    assert field_errors(body) == field_errors(signed)
    assert parameter in field_errors(body)


@pytest.mark.parametrize(("path", "parameter", "what"), QUERIES)
def test_a_query_integer_in_plain_digits_is_taken(api, known, path, parameter, what):
    response = _get(api, known, path, parameter, _plain(known, what))
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("around", SPACED, ids=repr)
@pytest.mark.parametrize(("path", "key"), FILTERS)
def test_a_legacy_filter_integer_with_white_space_is_400(api, carrier, path, key, around):
    sent = around.format(carrier.id)
    body = assert_problem(api.post(path, {"filter": {key: sent}}, format="json"), 400)
    signed = assert_problem(api.post(path, {"filter": {key: f"+{carrier.id}"}}, format="json"), 400)
    assert field_errors(body) == field_errors(signed)
    assert any(key in field for field in field_errors(body))


@pytest.mark.parametrize(("path", "key"), FILTERS)
def test_a_legacy_filter_integer_in_plain_digits_is_taken(api, carrier, path, key):
    for sent in (str(carrier.id), carrier.id):
        response = api.post(path, {"filter": {key: sent}}, format="json")
        assert response.status_code == 200, response.content
