"""A date that is not one reads the same wherever it is sent (contract section 6: YYYY-MM-DD,
input also MM-dd-yyyy): a query's `asOf`, the batch's `asOf`, a policy's or a scheduling's
dates, a driver's. One message, the query's, not DRF's list of strptime formats."""

from __future__ import annotations

import pytest

from tests.conftest import assert_problem
from tests.factories import PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
MESSAGE = "Expected a date as YYYY-MM-DD or MM-dd-yyyy."
NOT_DATES = ["x", "2026-2-28", "2026-06-01T00:00:00Z", 20260601, "2026-02-30"]


def _messages(response) -> dict[str, str]:
    return {e["field"]: e["message"] for e in assert_problem(response, 400)["errors"]}


@pytest.mark.parametrize("sent", [*NOT_DATES, " ", "\t"])
def test_a_bad_as_of_in_the_batch_reads_as_in_the_query(api, sent):
    query = api.get("/v1/coverages/vehicles", {"vin": "1FUJGLDR7CLBP8834", "asOf": str(sent)})
    assert _messages(query) == {"asOf": MESSAGE}
    batch = api.post(
        "/v1/coverages/vehicles/batch", {"vins": ["1FUJGLDR7CLBP8834"], "asOf": sent}, format="json"
    )
    assert _messages(batch) == {"asOf": MESSAGE}


@pytest.mark.parametrize("sent", NOT_DATES)
def test_a_bad_date_in_a_write_reads_as_in_the_query(api, carrier, sent):
    policy = PolicyFactory(client=carrier)
    response = api.put(f"/v1/policies/{policy.id}", {"cancellationDate": sent}, format="json")
    assert _messages(response) == {"cancellationDate": MESSAGE}
    unit = VehicleFactory(client=carrier)
    body = {"vehicleId": unit.id, "policyId": policy.id, "policyAddedDate": sent}
    response = api.post("/v1/vehicles/coverages", body, format="json")
    assert _messages(response) == {"policyAddedDate": MESSAGE}
    body = {"clientId": carrier.id, "firstName": "A", "lastName": "B", "hireDate": sent}
    response = api.post("/v1/drivers", body, format="json")
    assert _messages(response) == {"hireDate": MESSAGE}


@pytest.mark.parametrize("sent", ["", " 2026-06-01 "])
def test_an_as_of_the_query_takes_the_batch_takes(api, sent):
    query = api.get("/v1/coverages/vehicles", {"vin": "1FUJGLDR7CLBP8834", "asOf": sent})
    assert query.status_code == 404  # read (no such unit), not refused
    batch = api.post(
        "/v1/coverages/vehicles/batch", {"vins": ["1FUJGLDR7CLBP8834"], "asOf": sent}, format="json"
    )
    assert batch.status_code == 200, batch.content
