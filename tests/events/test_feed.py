"""Change events and the feed (contract section 14): emitted with the change, by whoever
makes it; rolled back with it; agency-scoped; cursor paging that never skips or repeats."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command
from django.db import connection, transaction  # noqa: F401

from apps.clients.services import client_update
from apps.core.camel_case import camel
from apps.core.dates import today
from apps.coverages.calendar import calendar_run
from apps.events.models import Event
from apps.events.serializers import EventFeedSerializer, EventSerializer
from apps.events.services import event_emit
from apps.events.tasks import events_prune
from apps.events.worker import last_heartbeat
from apps.masterdata.models import Insurer
from tests.admin.formdata import form_data
from tests.conftest import assert_problem
from tests.factories import PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


def feed(api, **params):
    response = api.get("/v1/events", params)
    assert response.status_code == 200, response.content
    return response.json()


def types_of(body):
    return [e["type"] for e in body["results"]]


def test_policy_write_emits_created_and_carrier_status_change(api, carrier):
    Insurer.objects.create(name="Northland Insurance Company", naic="24015")
    response = api.post(
        "/v1/policies",
        {
            "clientId": carrier.id,
            "policyNumber": "EV-1",
            "coverageType": "AL",
            "insurerName": "Northland Insurance Company",
            "effectiveDate": (today() - 10 * DAY).isoformat(),
            "expirationDate": (today() + 300 * DAY).isoformat(),
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = feed(api)
    assert types_of(body) == ["policy.created", "carrier.status_changed"]
    created, status = body["results"]
    assert status["data"] == {
        "clientId": carrier.id,
        "from": "INACTIVE",
        "to": "ACTIVE",
        "asOf": today().isoformat(),
    }
    assert status["agencyId"] == carrier.agency_id and status["clientId"] == carrier.id
    assert status["id"].startswith("evt_") and status["occurredAt"].endswith("Z")
    assert created["data"]["id"] == response.json()["id"]
    assert created["data"]["policyNumber"] == "EV-1"
    # Verification agrees with the event.
    verified = api.get("/v1/coverages/clients", {"id": carrier.id})
    assert '"status":"ACTIVE"' in verified.content.decode().replace(" ", "")

    cancel = api.put(
        f"/v1/policies/{response.json()['id']}",
        {"cancellationDate": today().isoformat()},
        format="json",
    )
    assert cancel.status_code == 200, cancel.content
    after = feed(api, after=body["next"])
    assert types_of(after) == ["policy.cancelled", "carrier.status_changed"]
    assert after["results"][1]["data"]["from"] == "ACTIVE"
    assert after["results"][1]["data"]["to"] == "INACTIVE"
    # Nothing new: the same cursor comes back, nothing repeats.
    again = feed(api, after=after["next"])
    assert again == {"results": [], "next": after["next"]}


def test_vehicle_scheduling_emits_scheduled_and_unit_status(api, carrier):
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    start = feed(api)["next"]
    response = api.post(
        "/v1/vehicles/coverages",
        {"vehicleId": unit.id, "policyId": policy.id, "policyAddedDate": today().isoformat()},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = feed(api, after=start) if start else feed(api)
    assert types_of(body)[-2:] == ["vehicle.scheduled", "vehicle.status_changed"]
    assert body["results"][-1]["data"]["vehicleId"] == unit.id
    assert body["results"][-2]["data"]["policyId"] == policy.id
    removed = api.put(
        "/v1/vehicles/coverages",
        {"vehicleId": unit.id, "policyId": policy.id, "coverageStatus": 1},
        format="json",
    )
    assert removed.status_code == 200, removed.content
    later = feed(api, after=body["next"])
    assert types_of(later) == ["vehicle.removed", "vehicle.status_changed"]
    assert later["results"][1]["data"]["to"] == "INACTIVE"


def test_rolled_back_change_leaves_no_event(manager, carrier):
    before = Event.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic():
        client_update(user=manager, instance=carrier, client_name="Renamed")
        assert Event.objects.count() == before + 1
        raise RuntimeError("abort")
    assert Event.objects.count() == before


def test_failed_write_leaves_no_event(api, carrier):
    before = Event.objects.count()
    response = api.put(f"/v1/clients/{carrier.id}", {"clientName": ""}, format="json")
    assert response.status_code == 400
    assert Event.objects.count() == before


def test_feed_answer_is_its_declared_schema(api, carrier):
    api.put(f"/v1/clients/{carrier.id}", {"clientName": "Declared"}, format="json")
    body = feed(api)
    assert list(body) == [camel(name) for name in EventFeedSerializer().fields]
    declared = [camel(name) for name in EventSerializer().fields]
    assert body["results"] and all(list(item) == declared for item in body["results"])


def test_feed_is_scoped_by_agency_and_filters(api, other_api, carrier, rival):
    api.put(f"/v1/clients/{carrier.id}", {"clientName": "Mine"}, format="json")
    other_api.put(f"/v1/clients/{rival.id}", {"clientName": "Theirs"}, format="json")
    mine = feed(api)
    assert {e["agencyId"] for e in mine["results"]} == {carrier.agency_id}
    theirs = feed(other_api)
    assert {e["clientId"] for e in theirs["results"]} == {rival.id}
    assert feed(api, clientId=rival.id)["results"] == []
    assert types_of(feed(api, type="client.updated")) == ["client.updated"]
    both = api.get("/v1/events?type=client.updated&type=client.deleted").json()
    assert types_of(both) == ["client.updated"]
    assert feed(api, type="policy.created")["results"] == []


def test_feed_errors(api, viewer_api, powerless, make_api, carrier):
    assert_problem(api.get("/v1/events", {"after": "not-a-cursor"}), 400)
    assert_problem(api.get("/v1/events", {"limit": "0"}), 400)
    assert_problem(api.get("/v1/events", {"limit": "501"}), 400)
    assert_problem(api.get("/v1/events", {"type": "policy.nope"}), 400)
    assert_problem(api.get("/v1/events", {"clientId": "x"}), 400)
    assert_problem(make_api().get("/v1/events"), 401)
    assert_problem(make_api(powerless).get("/v1/events"), 403)
    assert viewer_api.get("/v1/events").status_code == 200


def test_paging_never_skips_or_repeats(api, manager, carrier):
    for n in range(7):
        client_update(user=manager, instance=carrier, client_name=f"Name {n}")
    seen, cursor = [], None
    while True:
        body = feed(api, limit=3, **({"after": cursor} if cursor else {}))
        if not body["results"]:
            break
        seen += [e["id"] for e in body["results"]]
        cursor = body["next"]
    assert len(seen) == 7 == len(set(seen))
    assert [e["data"]["clientName"] for e in feed(api, limit=500)["results"]] == [
        f"Name {n}" for n in range(7)
    ]


def test_admin_change_emits(client, staff, carrier):
    """The admin's change form goes through the service: the edit is an event too."""
    client.force_login(staff)
    url = f"/admin/clients/client/{carrier.id}/change/"
    data = form_data(client.get(url).content.decode(), client_name="Renamed In Admin")
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    event = Event.objects.filter(type="client.updated", client_id=carrier.id).get()
    assert event.data["clientName"] == "Renamed In Admin"


def test_calendar_events_once_a_day(api, carrier):
    future = PolicyFactory(
        client=carrier, effective_date=today(), expiration_date=today() + 30 * DAY
    )
    other = PolicyFactory(
        client=carrier, effective_date=today() - 200 * DAY, expiration_date=today() + 7 * DAY
    )
    gone = PolicyFactory(
        client=carrier, effective_date=today() - 365 * DAY, expiration_date=today()
    )
    assert calendar_run(day=today()) >= 4
    assert calendar_run(day=today()) == 0  # idempotent: never twice for the same day
    body = feed(api, type=["policy.effective", "policy.expiring", "policy.expired"])
    got = sorted(
        (e["type"], e["data"]["policyId"], e["data"].get("daysLeft")) for e in body["results"]
    )
    assert got == sorted(
        [
            ("policy.effective", future.id, None),
            ("policy.expiring", future.id, 30),
            ("policy.expiring", other.id, 7),
            ("policy.expired", gone.id, None),
        ]
    )


def test_calendar_status_change(api, carrier):
    PolicyFactory(client=carrier, effective_date=today(), expiration_date=today() + 100 * DAY)
    calendar_run(day=today())
    status = feed(api, type="carrier.status_changed")["results"]
    assert [(e["data"]["from"], e["data"]["to"]) for e in status] == [("INACTIVE", "ACTIVE")]


def test_prune_keeps_30_days(carrier):
    old = event_emit(type="client.updated", agency_id=carrier.agency_id, client_id=1, data={})
    recent = event_emit(type="client.updated", agency_id=carrier.agency_id, client_id=1, data={})
    Event.objects.filter(pk=old.pk).update(occurred_at=dt.datetime.now(dt.UTC) - 40 * DAY)
    Event.objects.filter(pk=recent.pk).update(occurred_at=dt.datetime.now(dt.UTC) - 29 * DAY)
    assert events_prune(days=1) == 1  # never below 30 days, whatever is asked
    assert list(Event.objects.filter(pk__in=[old.pk, recent.pk])) == [recent]


def test_emit_refuses_unknown_type(carrier):
    with pytest.raises(ValueError):
        event_emit(type="nope", agency_id=carrier.agency_id, client_id=None, data={})


def test_worker_command_emits_calendar_events_and_beats(carrier):
    """A command emits too: the worker's daily job announces a policy coming in force."""
    policy = PolicyFactory(
        client=carrier, effective_date=today(), expiration_date=today() + 99 * DAY
    )
    assert last_heartbeat() is None
    call_command("worker", "--once", "--worker-id", "t1")
    assert Event.objects.filter(type="policy.effective", data__policyId=policy.id).count() == 1
    call_command("worker", "--once", "--worker-id", "t2")
    assert Event.objects.filter(type="policy.effective", data__policyId=policy.id).count() == 1
    assert last_heartbeat() is not None
