"""Contract section 7: a list sorts by `id`, `createdAt`, `updatedAt` and every field it filters
on, and by nothing else. `q` is a search over several fields, not a field: `sort=q` was accepted
on /v1/drivers and /v1/policies (quietly meaning the last name, the policy number). Nor are the
paging and sorting parameters themselves, or `asOf`. Every list of the OpenAPI document is
checked here, so a new list cannot advertise one."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from apps.webhooks.models import Webhook
from tests.conftest import assert_problem
from tests.factories import ClientFactory, PolicyFactory

pytestmark = pytest.mark.django_db

NOT_FIELDS = ["q", "page", "limit", "sort", "asOf"]


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from drf_spectacular.generators import SchemaGenerator

    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def sortable_lists(schema) -> dict[str, list[str]]:
    """Each list operation's path and the sort keys its `sort` parameter advertises."""
    lists = {}
    for path, operations in schema["paths"].items():
        for parameter in operations.get("get", {}).get("parameters", []):
            if parameter["name"] == "sort" and parameter["in"] == "query":
                advertised = parameter["description"].split("Sortable: ", 1)[1]
                lists[path] = advertised.split(", ")
    return lists


@pytest.fixture
def urls(agency, carrier):
    """A URL of every sortable list the caller may read."""
    policy = PolicyFactory(client=carrier)
    hook = Webhook.objects.create(agency=agency, url="https://93.184.216.34/x", secret="x")
    return {
        "/v1/clients": "/v1/clients",
        "/v1/policies": "/v1/policies",
        "/v1/vehicles": "/v1/vehicles",
        "/v1/drivers": "/v1/drivers",
        "/v1/policies/{id}/vehicles": f"/v1/policies/{policy.id}/vehicles",
        "/v1/documents/clients": f"/v1/documents/clients?clientId={carrier.id}",
        "/v1/documents/policies": f"/v1/documents/policies?policyId={policy.id}",
        "/v1/requirement-profiles": "/v1/requirement-profiles",
        "/v1/webhooks": "/v1/webhooks",
        "/v1/webhooks/{id}/deliveries": f"/v1/webhooks/{hook.id}/deliveries",
    }


def with_sort(url: str, sort: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{urlencode({'sort': sort})}"


def refused(response, key: str, why: str = "") -> list[str]:
    """The 400 on `sort` naming `key` (and why, if not unknown); the sort keys it offers."""
    body = assert_problem(response, 400)
    [error] = body["errors"]
    assert error["field"] == "sort"
    named, offered = error["message"].split(" Sortable: ")
    assert named == f"Cannot sort by '{key}'{why}."
    return offered.rstrip(".").split(", ")


@pytest.mark.parametrize("path", ["/v1/policies", "/v1/drivers"])
@pytest.mark.parametrize("sort", ["q", "-q", "id,q"])
def test_sort_by_the_search_parameter_is_400(api, path, sort):
    offered = refused(api.get(path, {"sort": sort}), "q")

    assert "q" not in offered and "id" in offered


@pytest.mark.parametrize("sort", ["--id", "+-id", "-+id", "++id", "-", "+"])
def test_a_sort_key_takes_one_sign_at_most(api, sort):
    why = ": one sign at most" if len(sort) > 1 else ""  # a bare sign names no key at all
    offered = refused(api.get("/v1/clients", {"sort": sort}), sort, why)

    assert "id" in offered


@pytest.mark.parametrize(("sort", "first"), [("-id", "last"), ("+id", "first"), ("id", "first")])
def test_one_sign_sorts_as_said(api, agency, sort, first):
    ClientFactory.create_batch(3, agency=agency)
    ids = [row["id"] for row in api.get("/v1/clients", {"sort": "id"}).json()["results"]]
    got = [row["id"] for row in api.get("/v1/clients", {"sort": sort}).json()["results"]]

    assert got == (ids if first == "first" else ids[::-1])


@pytest.mark.parametrize("path", ["/v1/policies/search", "/v1/drivers/search"])
def test_the_legacy_search_refuses_sort_by_q_too(api, path):
    body = assert_problem(api.post(path, {"sortBy": "q"}, format="json"), 400)

    assert body["errors"] == [
        {"field": "sortBy", "message": "Cannot sort by 'q'.", "code": "invalid"}
    ]


def test_no_list_offers_a_parameter_that_is_not_a_field(api, schema, urls):
    lists = sortable_lists(schema)
    assert set(lists) == set(urls)  # a new list is added above
    for path, offered in lists.items():
        assert not set(offered) & set(NOT_FIELDS), path
        for key in NOT_FIELDS:
            answer = api.get(with_sort(urls[path], key))
            assert sorted(refused(answer, key)) == sorted(offered), (path, key)


def test_every_advertised_key_sorts(api, schema, urls):
    for path, offered in sortable_lists(schema).items():
        for key in offered:
            response = api.get(with_sort(urls[path], f"-{key}"))
            assert response.status_code == 200, (path, key, response.content)


def test_every_field_a_list_filters_on_is_a_sort_key(schema):
    """Contract section 7: a list sorts by `id`, `createdAt`, `updatedAt` and every field it
    filters on (a filter added without its sort key, as `deleted` on a policy's vehicles was)."""
    # A unit is on several policies: `policyId` filters the vehicles but gives them no order.
    unordered = {("/v1/vehicles", "policyId")}
    missing = {}
    for path, offered in sortable_lists(schema).items():
        filters = {
            parameter["name"]
            for parameter in schema["paths"][path]["get"].get("parameters", [])
            if parameter["in"] == "query"
            and parameter["name"] not in NOT_FIELDS
            and (path, parameter["name"]) not in unordered
        }
        if filters - set(offered):
            missing[path] = sorted(filters - set(offered))
    assert missing == {}
