"""Status events for a client's units (contract section 14): when the client is deleted or
restored, and when a removal or an addition dated in the future takes effect (announced by the
daily calendar job, once per unit and day). Over HTTP, with a receiver verifying signatures."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.core.dates import today
from apps.coverages.calendar import calendar_run
from apps.webhooks.delivery import delivery_attempt
from apps.webhooks.models import WebhookDelivery
from tests.factories import PolicyFactory, VehicleFactory
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


@pytest.fixture
def private_ok(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True


def feed(api, **params) -> list[dict]:
    response = api.get("/v1/events", {"limit": 500, **params})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def run_due() -> list[str | None]:
    """What the worker does: attempt every due pending delivery."""
    due = WebhookDelivery.objects.filter(status="pending", next_attempt_at__lte=timezone.now())
    return [delivery_attempt(delivery_id=pk) for pk in due.values_list("pk", flat=True)]


def schedule(api, unit, policy, added=None):
    added = added or today()
    response = api.post(
        "/v1/vehicles/coverages",
        {"vehicleId": unit.id, "policyId": policy.id, "policyAddedDate": added.isoformat()},
        format="json",
    )
    assert response.status_code == 201, response.content


def unit_changes(api, **params) -> list[tuple[int, str, str, str]]:
    return [
        (e["data"]["vehicleId"], e["data"]["from"], e["data"]["to"], e["data"]["asOf"])
        for e in feed(api, type="vehicle.status_changed", **params)
    ]


def test_deleting_and_restoring_a_client_announces_its_units(api, carrier, private_ok):
    policy = PolicyFactory(client=carrier)
    covered, spare = VehicleFactory(client=carrier), VehicleFactory(client=carrier)
    gone = VehicleFactory(client=carrier, deleted=True)
    schedule(api, covered, policy)
    with Receiver() as receiver:
        hook = api.post(
            "/v1/webhooks",
            {
                "url": receiver.url,
                "eventTypes": ["vehicle.status_changed", "carrier.status_changed"],
            },
            format="json",
        ).json()
        receiver.secret = hook["secret"]
        start = api.get("/v1/events", {"limit": 500}).json()["next"]

        deleted = api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json")
        assert deleted.status_code == 200, deleted.content
        events = feed(api, after=start)
        assert [e["type"] for e in events] == [
            "client.deleted",
            "carrier.status_changed",
            "vehicle.status_changed",
            "vehicle.status_changed",
        ]
        _, carrier_event, unit_event, spare_event = events
        # Verification no longer finds the client nor any of its units: NOT_FOUND, as it
        # answers (the spare unit, INACTIVE before, is not found either).
        assert carrier_event["data"] == {
            "clientId": carrier.id,
            "from": "ACTIVE",
            "to": "NOT_FOUND",
            "asOf": today().isoformat(),
        }
        assert unit_event["clientId"] == carrier.id
        assert unit_event["data"] == {
            "vehicleId": covered.id,
            "from": "ACTIVE",
            "to": "NOT_FOUND",
            "asOf": today().isoformat(),
        }
        assert (spare_event["data"]["vehicleId"], spare_event["data"]["from"]) == (
            spare.id,
            "INACTIVE",
        )
        verified = api.get("/v1/coverages/vehicles", {"vin": covered.serial_number})
        assert verified.status_code == 404
        assert api.get("/v1/coverages/clients", {"id": carrier.id}).status_code == 404

        restored = api.put(f"/v1/clients/{carrier.id}", {"deleted": False}, format="json")
        assert restored.status_code == 200, restored.content
        assert unit_changes(api, after=start) == [
            (covered.id, "ACTIVE", "NOT_FOUND", today().isoformat()),
            (spare.id, "INACTIVE", "NOT_FOUND", today().isoformat()),
            (covered.id, "NOT_FOUND", "ACTIVE", today().isoformat()),
            (spare.id, "NOT_FOUND", "INACTIVE", today().isoformat()),
        ]
        assert run_due() == ["delivered"] * 6
    assert receiver.rejected == []
    got = sorted(
        (p["type"], p["data"].get("vehicleId"), p["data"]["to"]) for p in receiver.received
    )
    assert got == [
        ("carrier.status_changed", None, "ACTIVE"),
        ("carrier.status_changed", None, "NOT_FOUND"),
        ("vehicle.status_changed", covered.id, "ACTIVE"),
        ("vehicle.status_changed", covered.id, "NOT_FOUND"),
        ("vehicle.status_changed", spare.id, "INACTIVE"),
        ("vehicle.status_changed", spare.id, "NOT_FOUND"),
    ]
    log = api.get(f"/v1/webhooks/{hook['id']}/deliveries").json()
    assert log["count"] == 6 and {r["status"] for r in log["results"]} == {"delivered"}
    assert gone.id not in {p["data"].get("vehicleId") for p in receiver.received}


def test_client_delete_query_count_does_not_grow_with_the_fleet(api, carrier):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    policy = PolicyFactory(client=carrier)

    def toggle(deleted: bool) -> int:
        with CaptureQueriesContext(connection) as queries:
            response = api.put(f"/v1/clients/{carrier.id}", {"deleted": deleted}, format="json")
            assert response.status_code == 200, response.content
        return len(queries)

    schedule(api, VehicleFactory(client=carrier), policy)
    small = toggle(True), toggle(False)
    for _ in range(6):
        schedule(api, VehicleFactory(client=carrier), policy)
    large = toggle(True), toggle(False)
    assert large == small
    # Each scheduling (7) and each toggle of each scheduled unit (2 x 1, then 2 x 7).
    assert len(unit_changes(api)) == 7 + 2 * 1 + 2 * 7


def test_removal_dated_in_the_future_is_announced_on_its_day(api, carrier, private_ok):
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    schedule(api, unit, policy)
    assert unit_changes(api) == [(unit.id, "INACTIVE", "ACTIVE", today().isoformat())]
    with Receiver() as receiver:
        hook = api.post(
            "/v1/webhooks",
            {"url": receiver.url, "eventTypes": ["vehicle.status_changed"]},
            format="json",
        ).json()
        receiver.secret = hook["secret"]
        removal = api.put(
            "/v1/vehicles/coverages",
            {
                "vehicleId": unit.id,
                "policyId": policy.id,
                "coverageStatus": 1,
                "policyRemovedDate": (today() + 3 * DAY).isoformat(),
            },
            format="json",
        )
        assert removal.status_code == 200, removal.content
        # Covered until then: nothing to announce yet, neither by the write nor by the days
        # before the removal.
        assert len(unit_changes(api)) == 1
        calendar_run(day=today() + DAY)
        calendar_run(day=today() + 2 * DAY)
        assert len(unit_changes(api)) == 1
        assert calendar_run(day=today() + 3 * DAY) >= 1
        assert calendar_run(day=today() + 3 * DAY) == 0  # never twice for the same day
        assert unit_changes(api)[1:] == [
            (unit.id, "ACTIVE", "INACTIVE", (today() + 3 * DAY).isoformat())
        ]
        assert run_due() == ["delivered"]
    (payload,) = receiver.received
    assert payload["data"] == {
        "vehicleId": unit.id,
        "from": "ACTIVE",
        "to": "INACTIVE",
        "asOf": (today() + 3 * DAY).isoformat(),
    }
    (row,) = api.get(f"/v1/webhooks/{hook['id']}/deliveries").json()["results"]
    assert row["eventType"] == "vehicle.status_changed" and row["status"] == "delivered"


def test_addition_dated_in_the_future_is_announced_on_its_day(api, carrier):
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    schedule(api, unit, policy, added=today() + 5 * DAY)
    assert unit_changes(api) == []
    calendar_run(day=today() + 5 * DAY)
    assert unit_changes(api) == [(unit.id, "INACTIVE", "ACTIVE", (today() + 5 * DAY).isoformat())]


def test_a_change_announced_by_a_write_is_not_announced_again_by_the_day(api, carrier):
    """A removal dated today is announced by the write; the day's job, run after it (a worker
    starting late), does not announce it a second time."""
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    schedule(api, unit, policy, added=today() - 10 * DAY)
    removal = api.put(
        "/v1/vehicles/coverages",
        {"vehicleId": unit.id, "policyId": policy.id, "coverageStatus": 1},
        format="json",
    )
    assert removal.status_code == 200, removal.content
    announced = unit_changes(api)
    assert announced[-1] == (unit.id, "ACTIVE", "INACTIVE", today().isoformat())
    calendar_run(day=today())
    assert unit_changes(api) == announced


def test_future_cancellation_announces_the_carrier_and_its_units(api, carrier):
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    schedule(api, unit, policy)
    cancel = api.put(
        f"/v1/policies/{policy.id}",
        {"cancellationDate": (today() + 2 * DAY).isoformat()},
        format="json",
    )
    assert cancel.status_code == 200, cancel.content
    assert feed(api, type="carrier.status_changed") == []  # in force until then
    calendar_run(day=today() + 2 * DAY)
    day = (today() + 2 * DAY).isoformat()
    assert unit_changes(api)[-1] == (unit.id, "ACTIVE", "INACTIVE", day)
    last = feed(api, type="carrier.status_changed")[-1]["data"]
    assert (last["from"], last["to"], last["asOf"]) == ("ACTIVE", "INACTIVE", day)
