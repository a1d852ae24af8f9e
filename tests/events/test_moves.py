"""A record that moves to another client or agency is announced to both (docs/webhooks.md):
the client it moved to by the write's own event, the client it left by the same event type
within an agency, and by a deletion, showing the record as it last saw it, when it went to
another agency."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from tests.factories import ClientFactory, PolicyFactory, UserFactory, VehicleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def both(make_api, groups, agency, other_agency):
    """A manager of both agencies, who may move records between them."""
    return make_api(
        UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    )


def feed(api, client, prefix: str) -> list[tuple[str, int, int, dict]]:
    """The `prefix…` events of `client`'s feed: (type, agencyId, clientId, data)."""
    body = api.get("/v1/events", {"clientId": client.id, "limit": 500}).json()
    return [
        (e["type"], e["agencyId"], e["clientId"], e["data"])
        for e in body["results"]
        if e["type"].startswith(prefix)
    ]


def deleted_at_the_move(data: dict, before: dt.datetime, after: dt.datetime) -> str:
    """The record's `deletedAt`, checked to be the instant of the move (between the request's
    start and its end), as a deletion's record carries the instant of the deletion."""
    deleted_at = data["deletedAt"]
    assert deleted_at is not None
    assert before <= dt.datetime.fromisoformat(deleted_at) <= after, (before, deleted_at, after)
    return deleted_at


def test_a_policy_moved_within_the_agency_is_announced_to_both_clients(api, agency, carrier):
    policy = PolicyFactory(client=carrier)
    other = ClientFactory(agency=agency)
    moved = api.put(f"/v1/policies/{policy.id}", {"clientId": other.id}, format="json").json()
    assert feed(api, carrier, "policy.") == [("policy.updated", agency.id, carrier.id, moved)]
    assert feed(api, other, "policy.") == [("policy.updated", agency.id, other.id, moved)]


def test_a_policy_moved_to_another_agency_is_deleted_for_the_one_it_left(
    both, api, other_api, agency, other_agency, carrier, rival
):
    policy = PolicyFactory(client=carrier)
    seen = api.get(f"/v1/policies/{policy.id}").json()
    before = timezone.now()
    moved = both.put(f"/v1/policies/{policy.id}", {"clientId": rival.id}, format="json")
    after = timezone.now()
    assert moved.status_code == 200, moved.content
    # What the agency saw, deleted at the move, as a deletion's record is.
    [(kind, agency_id, client_id, data)] = feed(api, carrier, "policy.")
    assert (kind, agency_id, client_id) == ("policy.deleted", agency.id, carrier.id)
    assert data == {**seen, "deleted": True, "deletedAt": deleted_at_the_move(data, before, after)}
    assert feed(other_api, rival, "policy.") == [
        ("policy.updated", other_agency.id, rival.id, moved.json())
    ]


def test_a_vehicle_moved_within_the_agency_is_announced_to_both_clients(api, agency, carrier):
    unit = VehicleFactory(client=carrier)
    other = ClientFactory(agency=agency)
    moved = api.put(f"/v1/vehicles/{unit.id}", {"clientId": other.id}, format="json")
    assert moved.status_code == 200, moved.content
    events = feed(api, carrier, "vehicle.updated")
    assert [(t, a, c) for t, a, c, _ in events] == [("vehicle.updated", agency.id, carrier.id)]
    assert events[0][3]["clientId"] == other.id  # as it is now
    assert [(t, a, c) for t, a, c, _ in feed(api, other, "vehicle.updated")] == [
        ("vehicle.updated", agency.id, other.id)
    ]


def test_a_vehicle_moved_to_another_agency_is_gone_for_the_one_it_left(
    both, api, other_api, agency, other_agency, carrier, rival
):
    unit = VehicleFactory(client=carrier)
    seen = api.get(f"/v1/vehicles/{unit.id}").json()
    moved = both.put(f"/v1/vehicles/{unit.id}", {"clientId": rival.id}, format="json")
    assert moved.status_code == 200, moved.content
    # A unit's deletion is its vehicle.updated, deleted: what the agency saw, deleted.
    [(kind, agency_id, client_id, data)] = feed(api, carrier, "vehicle.updated")
    assert (kind, agency_id, client_id) == ("vehicle.updated", agency.id, carrier.id)
    assert data == {**{k: seen[k] for k in data}, "deleted": True}
    assert data["clientId"] == carrier.id
    [(_, agency_id, client_id, data)] = feed(other_api, rival, "vehicle.updated")
    assert (agency_id, client_id, data["clientId"]) == (other_agency.id, rival.id, rival.id)


def test_a_client_moved_to_another_agency_is_deleted_for_the_one_it_left(
    both, api, other_api, agency, other_agency, carrier
):
    seen = api.get(f"/v1/clients/{carrier.id}").json()
    before = timezone.now()
    moved = both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json")
    after = timezone.now()
    assert moved.status_code == 200, moved.content
    [(kind, agency_id, client_id, data)] = feed(api, carrier, "client.")
    assert (kind, agency_id, client_id) == ("client.deleted", agency.id, carrier.id)
    assert data == {**seen, "deleted": True, "deletedAt": deleted_at_the_move(data, before, after)}
    assert feed(other_api, carrier, "client.") == [
        ("client.updated", other_agency.id, carrier.id, moved.json())
    ]
