"""An event's `data` is the changed record as the API shows it (contract section 14): the GET of
the same record at that moment, every field, a policy's `status` (today's) included."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.masterdata.models import CoverageType
from tests.factories import DriverFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


def last_event(api, type_: str) -> dict:
    body = api.get("/v1/events", {"type": type_, "limit": 500}).json()
    assert body["results"], f"no {type_} event"
    return body["results"][-1]["data"]


def write(api, method: str, url: str, body: dict, status: int = 200) -> dict:
    response = getattr(api, method)(url, body, format="json")
    assert response.status_code == status, response.content
    return response.json()


def get(api, url: str) -> dict:
    response = api.get(url)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize(
    "effective, expected_status", [(-300, "ACTIVE"), (30, "FUTURE"), (-400, "EXPIRED")]
)
def test_policy_events_show_the_policy_as_its_get_does(api, carrier, effective, expected_status):
    body = {
        "clientId": carrier.id,
        "policyNumber": "PN-1",
        "effectiveDate": (today() + effective * DAY).isoformat(),
        "expirationDate": (today() + (effective + 365) * DAY).isoformat(),
        "coverageType": "AL",
        "limits": [{"name": "Combined Single Limit", "amount": "1000000.00"}],
    }
    url = f"/v1/policies/{write(api, 'post', '/v1/policies', body, 201)['id']}"
    shown = get(api, url)
    assert shown["status"] == expected_status
    assert last_event(api, "policy.created") == shown

    write(api, "put", url, {"description": "Renewed terms"})
    assert last_event(api, "policy.updated") == get(api, url)
    write(api, "put", url, {"deleted": True})
    assert last_event(api, "policy.deleted") == get(api, url)
    write(api, "put", url, {"deleted": False})
    assert last_event(api, "policy.restored") == get(api, url)


def test_a_cancelled_policys_event_shows_it_cancelled(api, carrier):
    body = {
        "clientId": carrier.id,
        "effectiveDate": (today() - 100 * DAY).isoformat(),
        "expirationDate": (today() + 265 * DAY).isoformat(),
        "coverageType": "AL",
    }
    url = f"/v1/policies/{write(api, 'post', '/v1/policies', body, 201)['id']}"
    write(api, "put", url, {"cancellationDate": today().isoformat()})
    shown = get(api, url)
    assert shown["status"] == "CANCELLED"
    assert last_event(api, "policy.cancelled") == shown


def test_client_events_show_the_client_as_its_get_does(api, carrier):
    url = f"/v1/clients/{carrier.id}"
    write(api, "put", url, {"clientName": "Renamed Carrier"})
    assert last_event(api, "client.updated") == get(api, url)
    created = write(
        api, "post", "/v1/clients", {"clientName": "New", "agencyId": carrier.agency_id}, 201
    )
    assert last_event(api, "client.created") == get(api, f"/v1/clients/{created['id']}")


def test_vehicle_events_show_the_vehicle_as_its_list_does(api, carrier):
    """A unit's record is its item of `GET /v1/vehicles`; the detail adds what is not the
    unit's own fields (its periods, drivers, audit trail), which an event does not carry."""
    unit = VehicleFactory(client=carrier)
    url = f"/v1/vehicles/{unit.id}"
    write(api, "put", url, {"unit": "T-42"})
    [listed] = get(api, f"/v1/vehicles?vin={unit.serial_number}")["results"]
    data = last_event(api, "vehicle.updated")
    assert data == listed
    assert data == {key: get(api, url)[key] for key in data}


@pytest.mark.parametrize("subject", ["vehicle", "driver"])
def test_assignment_events_show_the_period_as_the_api_answers_it(api, carrier, subject):
    """A period has no URL of its own: its record is what the scheduling calls answer."""
    if subject == "vehicle":
        target, status, policy_type = VehicleFactory(client=carrier), 4, "AL"
    else:
        target, status, policy_type = DriverFactory(client=carrier), 7, "OA"
    body = {
        "clientId": carrier.id,
        "effectiveDate": (today() - 100 * DAY).isoformat(),
        "expirationDate": (today() + 265 * DAY).isoformat(),
        "coverageTypeId": CoverageType.objects.get(code=policy_type).pk,
    }
    policy_id = write(api, "post", "/v1/policies", body, 201)["id"]
    pair = {f"{subject}Id": target.id, "policyId": policy_id}
    url = f"/v1/{subject}s/coverages"

    added = (today() - 50 * DAY).isoformat()
    scheduled = write(api, "post", url, {**pair, "policyAddedDate": added}, 201)
    assert last_event(api, f"{subject}.scheduled") == scheduled
    moved = (today() - 40 * DAY).isoformat()
    rescheduled = write(
        api, "put", url, {**pair, "coverageStatus": status, "policyAddedDate": moved}
    )
    assert last_event(api, f"{subject}.rescheduled") == rescheduled
    removed = write(api, "put", url, {**pair, "coverageStatus": 1})
    assert last_event(api, f"{subject}.removed") == removed
