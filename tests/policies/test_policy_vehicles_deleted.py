"""A policy's vehicles leave out deleted vehicles unless `deleted` asks for them.

Contract section 4: deleted records leave lists unless the `deleted` filter asks for them.
`GET /v1/vehicles?policyId=` did; `GET /v1/policies/{id}/vehicles` listed a deleted unit as
scheduled, and took no `deleted` filter. Both lists read `deleted` by the same rule now.
"""

from __future__ import annotations

import pytest

from apps.core.dates import today
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet(api, carrier):
    """A policy with two units scheduled, the second then deleted through the API."""
    policy = PolicyFactory(client=carrier)
    kept, gone = VehicleFactory(client=carrier), VehicleFactory(client=carrier)
    for unit in (kept, gone):
        body = {"vehicleId": unit.id, "policyId": policy.id, "policyAddedDate": str(today())}
        assert api.post("/v1/vehicles/coverages", body, format="json").status_code == 201
    deleted = api.put(f"/v1/vehicles/{gone.id}", {"deleted": True}, format="json")
    assert deleted.status_code == 200, deleted.content
    return policy, kept, gone


def listed(api, path: str) -> list[tuple[int, bool]]:
    response = api.get(path)
    assert response.status_code == 200, response.content
    return sorted((row["id"], row["deleted"]) for row in response.json()["results"])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", "kept"),
        ("?deleted=false", "kept"),
        ("?deleted=true", "gone"),
    ],
)
def test_a_policys_vehicles_read_deleted_as_the_vehicle_list_does(api, fleet, query, expected):
    policy, kept, gone = fleet
    unit = {"kept": kept, "gone": gone}[expected]
    on_policy = listed(api, f"/v1/policies/{policy.id}/vehicles{query}")
    assert on_policy == [(unit.id, unit is gone)]
    on_list = listed(api, f"/v1/vehicles?policyId={policy.id}{query.replace('?', '&')}")
    assert on_list == on_policy


def test_the_count_leaves_a_deleted_vehicle_out(api, fleet):
    policy, _kept, _gone = fleet
    assert api.get(f"/v1/policies/{policy.id}/vehicles").json()["count"] == 1


def test_a_bad_deleted_value_is_400_on_both_lists(api, fleet):
    policy, _kept, _gone = fleet
    for path in (f"/v1/policies/{policy.id}/vehicles", f"/v1/vehicles?policyId={policy.id}"):
        joiner = "&" if "?" in path else "?"
        body = assert_problem(api.get(f"{path}{joiner}deleted=maybe"), 400)
        assert "deleted" in field_errors(body)


def test_the_schema_documents_the_deleted_filter(api):
    schema = api.get("/v1/schema?format=json")
    assert schema.status_code == 200, schema.content[:200]
    operation = schema.json()["paths"]["/v1/policies/{id}/vehicles"]["get"]
    parameters = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
    assert parameters["deleted"]["schema"]["type"] == "boolean"
