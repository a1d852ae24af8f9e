"""`carrier.status_changed` and `vehicle.status_changed` fire exactly when verification would
answer differently today (docs/webhooks.md), `NOT_FOUND` included: a client or unit that
verification does not find (deleted, a unit of a deleted client, not created yet) is
`NOT_FOUND`, so a creation is announced from it and a deletion to it.

Each step is a write over the API; verification is asked before and after it, and the write's
status events must be exactly that change (none when the answer is the same)."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.events.models import Event

pytestmark = pytest.mark.django_db
YEAR = dt.timedelta(days=365)
VIN = "1XKYDP9X5MJ000777"
VIN_2 = "1XKYDP9X5MJ000778"


def client_status(api, client_id) -> str:
    if client_id is None:
        return "NOT_FOUND"
    response = api.get("/v1/coverages/clients", {"id": client_id})
    if response.status_code == 404:
        return "NOT_FOUND"
    assert response.status_code == 200, response.content
    return response.json()["results"][0]["status"]


def unit_status(api, vin) -> str:
    response = api.get("/v1/coverages/vehicles", {"vin": vin})
    if response.status_code == 404:
        return "NOT_FOUND"
    assert response.status_code == 200, response.content
    return response.json()["results"][0]["status"]


def status_events(after_id: int) -> list[tuple]:
    return list(
        Event.objects.filter(pk__gt=after_id, type__endswith=".status_changed")
        .order_by("pk")
        .values_list("type", "client_id", "data__vehicleId", "data__from", "data__to")
    )


def last_event_id() -> int:
    return Event.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def ok(response) -> dict:
    assert response.status_code in (200, 201), response.content
    return response.json()


class Walk:
    """Steps over the API, each checked against verification before and after it."""

    def __init__(self, api):
        self.api = api
        self.client_id = None
        self.units: dict[str, int] = {}

    def verdicts(self) -> dict:
        seen = {("carrier.status_changed", None): client_status(self.api, self.client_id)}
        for vin, unit_id in self.units.items():
            seen[("vehicle.status_changed", unit_id)] = unit_status(self.api, vin)
        return seen

    def step(self, write) -> list[tuple]:
        before, start = self.verdicts(), last_event_id()
        write()
        after = self.verdicts()
        expected = [
            (kind, self.client_id, unit, before.get((kind, unit), "NOT_FOUND"), now)
            for (kind, unit), now in after.items()
            if before.get((kind, unit), "NOT_FOUND") != now
        ]
        got = status_events(start)
        assert sorted(got, key=str) == sorted(expected, key=str), write.__name__
        return got


def test_client_status_events_are_what_verification_answers(api, agency):
    walk = Walk(api)
    policy = {}

    def create_client():
        body = {"clientName": "New Carrier", "agencyId": agency.id, "dot": "3330001"}
        walk.client_id = ok(api.post("/v1/clients", body, format="json"))["id"]

    def add_policy_in_force():
        body = {
            "clientId": walk.client_id,
            "coverageType": "AL",
            "effectiveDate": str(today()),
            "expirationDate": str(today() + YEAR),
        }
        policy["id"] = ok(api.post("/v1/policies", body, format="json"))["id"]

    def delete_client():
        ok(api.put(f"/v1/clients/{walk.client_id}", {"deleted": True}, format="json"))

    def restore_client():
        ok(api.put(f"/v1/clients/{walk.client_id}", {"deleted": False}, format="json"))

    def delete_policy():
        ok(api.put(f"/v1/policies/{policy['id']}", {"deleted": True}, format="json"))

    assert walk.step(create_client) == [
        ("carrier.status_changed", walk.client_id, None, "NOT_FOUND", "INACTIVE")
    ]
    walk.step(add_policy_in_force)
    assert walk.step(delete_client) == [
        ("carrier.status_changed", walk.client_id, None, "ACTIVE", "NOT_FOUND")
    ]
    assert walk.step(restore_client)[0][-2:] == ("NOT_FOUND", "ACTIVE")
    walk.step(delete_policy)
    assert walk.step(delete_client) == [
        ("carrier.status_changed", walk.client_id, None, "INACTIVE", "NOT_FOUND")
    ]
    assert walk.step(restore_client)[0][-2:] == ("NOT_FOUND", "INACTIVE")


def test_a_client_created_deleted_announces_nothing(api, agency):
    walk = Walk(api)

    def create_deleted_client():
        body = {"clientName": "Gone Co", "agencyId": agency.id, "deleted": True}
        walk.client_id = ok(api.post("/v1/clients", body, format="json"))["id"]

    assert walk.step(create_deleted_client) == []


def test_unit_status_events_are_what_verification_answers(api, carrier):
    walk = Walk(api)
    walk.client_id = carrier.id
    policy = ok(
        api.post(
            "/v1/policies",
            {
                "clientId": carrier.id,
                "coverageType": "AL",
                "effectiveDate": str(today()),
                "expirationDate": str(today() + YEAR),
            },
            format="json",
        )
    )

    def create_units():
        for vin, unit in ((VIN, "1"), (VIN_2, "2")):
            body = {
                "clientId": carrier.id,
                "unit": unit,
                "unitType": "Tractor",
                "modelYear": 2020,
                "makes": "Mack",
                "serialNumber": vin,
            }
            walk.units[vin] = ok(api.post("/v1/vehicles", body, format="json"))["id"]

    def schedule_first():
        body = {"vehicleId": walk.units[VIN], "policyId": policy["id"]}
        ok(api.post("/v1/vehicles/coverages", {**body, "policyAddedDate": str(today())}, "json"))

    def delete_first():
        ok(api.put(f"/v1/vehicles/{walk.units[VIN]}", {"deleted": True}, format="json"))

    def restore_first():
        ok(api.put(f"/v1/vehicles/{walk.units[VIN]}", {"deleted": False}, format="json"))

    def delete_client():
        ok(api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json"))

    def restore_client():
        ok(api.put(f"/v1/clients/{carrier.id}", {"deleted": False}, format="json"))

    assert {e[-2:] for e in walk.step(create_units)} == {("NOT_FOUND", "INACTIVE")}
    walk.step(schedule_first)
    assert walk.step(delete_first) == [
        ("vehicle.status_changed", carrier.id, walk.units[VIN], "ACTIVE", "NOT_FOUND")
    ]
    walk.step(restore_first)
    # Deleting the client: verification finds neither unit, the uncovered one included.
    assert len(walk.step(delete_client)) == 3
    assert len(walk.step(restore_client)) == 3
