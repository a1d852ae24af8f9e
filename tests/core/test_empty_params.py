"""One rule for an empty query parameter on every list: `?dot=`, `?deleted=`, `?status=` are
the filter not given (what most HTTP APIs do, and what most filters here did): the list answers
as without it. `?deleted=` and `?acordEnabled=` were a 400 "Must be true or false." where
`?dot=` and `?agencyId=` listed every row. The walk covers every parameter of every paged list
the OpenAPI document names, and the legacy searches' `filter` bodies; a value that is not
empty keeps its own rules (a bad boolean is still a 400)."""

from __future__ import annotations

import pytest

from apps.core.dates import today
from apps.documents.models import Document
from apps.policies.models import Policy
from apps.webhooks.models import Webhook, WebhookDelivery
from tests.conftest import assert_problem
from tests.core.test_sort_keys import schema, urls  # noqa: F401  (fixtures)
from tests.documents.test_api import upload
from tests.factories import ClientFactory, DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db

# Parameters that are not filters: paging, the order, and a list's owner it cannot go without.
NOT_FILTERS = {"page", "limit", "sort"}
REQUIRED = {"/v1/documents/clients": "clientId", "/v1/documents/policies": "policyId"}


def list_parameters(api_schema) -> dict[str, list[str]]:
    """Each paged list's path and the query parameters its operation declares."""
    lists = {}
    for path, operations in api_schema["paths"].items():
        names = [p["name"] for p in operations.get("get", {}).get("parameters", [])]
        if "page" in names and "limit" in names:
            lists[path] = [
                p["name"]
                for p in operations["get"]["parameters"]
                if p["in"] == "query" and p["name"] not in NOT_FILTERS
            ]
    return lists


@pytest.fixture
def world(api, agency, carrier, urls):  # noqa: F811
    """A few records of every list, deleted ones included, so a filter applied shows."""
    hook = Webhook.objects.get(agency=agency)  # `urls`' subscription: it hears what follows
    ClientFactory(agency=agency, deleted=True, acord_enabled=False)
    # `urls`' policy, whose documents its list shows.
    policy = Policy.objects.get(pk=urls["/v1/documents/policies"].split("policyId=")[1])
    PolicyFactory(client=carrier, deleted=True)
    VehicleFactory(client=carrier)
    VehicleFactory(client=carrier, deleted=True)
    DriverFactory(client=carrier)
    DriverFactory(client=carrier, status="INACTIVE")
    assert upload(api, carrier).status_code == 201
    assert upload(api, policy, module="policies").status_code == 201
    Document.objects.filter(pk=upload(api, carrier, name="b.pdf").json()["id"]).update(deleted=True)
    unit = VehicleFactory(client=carrier)
    scheduled = api.post(
        "/v1/vehicles/coverages",
        {"vehicleId": unit.id, "policyId": policy.id, "policyAddedDate": str(today())},
        format="json",
    )
    assert scheduled.status_code == 201, scheduled.content
    assert WebhookDelivery.objects.filter(webhook=hook).exists()
    return hook, policy


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_every_lists_empty_parameter_is_the_filter_not_given(api, schema, urls, world):  # noqa: F811
    lists = list_parameters(schema)
    assert set(lists) == set(urls)  # a new list is walked too
    for path, parameters in lists.items():
        url = urls[path]
        joiner = "&" if "?" in url else "?"
        everything = ids(api.get(url))
        assert everything, path  # something a filter could leave out
        for name in parameters:
            if name == REQUIRED.get(path):
                continue
            answer = api.get(f"{url}{joiner}{name}=")
            assert answer.status_code == 200, (path, name, answer.content)
            assert ids(answer) == everything, (path, name)


@pytest.mark.parametrize("path", ["/v1/policies/search", "/v1/drivers/search"])
def test_the_legacy_searches_read_an_empty_filter_value_the_same(api, schema, path, world):  # noqa: F811
    listed = list_parameters(schema)[path.removesuffix("/search")]
    everything = api.post(path, {}, format="json").json()["items"]
    for name in listed:
        searched = api.post(path, {"filter": {name: ""}}, format="json")
        assert searched.status_code == 200, (path, name, searched.content)
        assert searched.json()["items"] == everything, (path, name)


def test_a_value_that_is_not_empty_keeps_its_rules(api, world):
    assert_problem(api.get("/v1/clients?deleted=maybe"), 400)
    assert_problem(api.get("/v1/clients?acordEnabled=x"), 400)
    assert_problem(api.get("/v1/clients?dot=12a"), 400)
    assert_problem(api.get("/v1/clients?agencyId=x"), 400)
    assert ids(api.get("/v1/clients?deleted=true")) != ids(api.get("/v1/clients?deleted="))
    # Spaces are a value, as `QueryParameters` reads them (apps.core.params): not a boolean.
    assert_problem(api.get("/v1/clients?deleted=%20"), 400)


def test_the_schema_says_each_filter_takes_an_empty_value(schema):  # noqa: F811
    """`allowEmptyValue` on every filter the lists take empty, so a schema-driven client (and
    the fuzzer) knows `?deleted=` is allowed: it flagged the 200 as a violation of `boolean`."""
    for path, names in list_parameters(schema).items():
        declared = {p["name"]: p for p in schema["paths"][path]["get"]["parameters"]}
        for name in names:
            assert declared[name].get("allowEmptyValue") is True, (path, name)
