"""The calendar job catches up days on which no worker ran (contract section 14: events that
depend only on the calendar are emitted on the day they become true, without anyone calling).

The worker last ran a week ago; started now, it emits each missed day's policy.effective,
policy.expiring (30 and 7 days), policy.expired and the status changes they cause, with the
missed day as `asOf`, once each (a second start emits nothing), set-based (the same number of
queries per day whatever the number of policies). Over HTTP: the feed and the delivery log,
delivered to a receiver that verifies every signature."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.core.dates import today
from apps.coverages.calendar import calendar_catch_up, calendar_days_due
from apps.coverages.models import VehicleCoverage
from apps.events.models import CalendarMark
from apps.masterdata.models import Insurer
from apps.policies.models import Policy
from apps.webhooks.delivery import delivery_attempt
from apps.webhooks.models import WebhookDelivery
from tests.factories import ClientFactory, PolicyFactory, VehicleFactory
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)
CALENDAR = ["policy.effective", "policy.expiring", "policy.expired"]
STATUS = ["carrier.status_changed", "vehicle.status_changed"]


@pytest.fixture
def private_ok(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True


def last_ran(day: dt.date) -> None:
    """A worker ran the calendar job of `day` (and of every day before it)."""
    CalendarMark.objects.create(policy_id=0, type="calendar.day", day=day)


def recorded_before_the_outage(*policies) -> None:
    Policy.objects.filter(pk__in=[p.pk for p in policies]).update(
        created_at=timezone.now() - 60 * DAY
    )


def feed(api, **params) -> list[dict]:
    response = api.get("/v1/events", {"limit": 500, **params})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def iso(day: dt.date) -> str:
    return day.isoformat()


def client_status(api, pk: int) -> str:
    response = api.get("/v1/coverages/clients", {"id": pk})
    assert response.status_code == 200, response.content
    return response.json()["results"][0]["status"]


def test_a_week_without_worker_is_caught_up_once(api, carrier, private_ok):
    Insurer.objects.create(name="Northland Insurance Company", naic="24015")
    ended = ClientFactory(agency=carrier.agency)  # its policy expired during the outage
    started = ClientFactory(agency=carrier.agency)  # its policy came in force during it
    renewed = ClientFactory(agency=carrier.agency)  # expired, then a write gave it a policy
    expired = PolicyFactory(
        client=ended, effective_date=today() - 300 * DAY, expiration_date=today() - 2 * DAY
    )
    unit = VehicleFactory(client=ended)
    VehicleCoverage.objects.create(
        vehicle=unit, policy=expired, policy_added_date=today() - 200 * DAY, coverage_status=4
    )
    effective = PolicyFactory(
        client=started, effective_date=today() - 5 * DAY, expiration_date=today() + 25 * DAY
    )
    seven = PolicyFactory(client=carrier, expiration_date=today() + 3 * DAY)
    lapsed = PolicyFactory(
        client=renewed, effective_date=today() - 300 * DAY, expiration_date=today() - 6 * DAY
    )
    recorded_before_the_outage(expired, effective, seven, lapsed)
    last_ran(today() - 8 * DAY)
    with Receiver() as receiver:
        hook = api.post("/v1/webhooks", {"url": receiver.url}, format="json").json()
        receiver.secret = hook["secret"]
        # During the outage: a policy recorded today, in force since yesterday (its write
        # announces the client ACTIVE as of today), and one back-dated on a covered client.
        renewal = api.post(
            "/v1/policies",
            {
                "clientId": renewed.id,
                "policyNumber": "RENEWAL-1",
                "coverageType": "AL",
                "insurerName": "Northland Insurance Company",
                "effectiveDate": iso(today() - DAY),
                "expirationDate": iso(today() + 364 * DAY),
            },
            format="json",
        )
        assert renewal.status_code == 201, renewal.content
        backdated = PolicyFactory(
            client=carrier, effective_date=today() - 3 * DAY, expiration_date=today() + 300 * DAY
        )
        written = feed(api)

        call_command("worker", "--once", "--worker-id", "late")

        caught_up = feed(api)[len(written) :]
        assert sorted(
            (e["type"], e["data"]["policyId"], e["data"].get("daysLeft"), e["data"]["asOf"])
            for e in caught_up
            if e["type"] in CALENDAR
        ) == sorted(
            [
                ("policy.effective", effective.id, None, iso(today() - 5 * DAY)),
                ("policy.expiring", effective.id, 30, iso(today() - 5 * DAY)),
                ("policy.expiring", seven.id, 7, iso(today() - 4 * DAY)),
                ("policy.expired", expired.id, None, iso(today() - 2 * DAY)),
                ("policy.expired", lapsed.id, None, iso(today() - 6 * DAY)),
            ]
        )
        # The days' status changes, oldest day first; not the renewed client's lapse (a
        # write announced its current status since), nothing for the back-dated policy.
        assert [
            (e["type"], e["clientId"], e["data"]["from"], e["data"]["to"], e["data"]["asOf"])
            for e in caught_up
            if e["type"] in STATUS
        ] == [
            ("carrier.status_changed", started.id, "INACTIVE", "ACTIVE", iso(today() - 5 * DAY)),
            ("carrier.status_changed", ended.id, "ACTIVE", "INACTIVE", iso(today() - 2 * DAY)),
            ("vehicle.status_changed", ended.id, "ACTIVE", "INACTIVE", iso(today() - 2 * DAY)),
        ]
        assert backdated.id not in {e["data"].get("policyId") for e in caught_up}
        # The last status event of each client is what verification answers now.
        last = {e["clientId"]: e["data"]["to"] for e in feed(api, type="carrier.status_changed")}
        assert (
            last
            == {pk: client_status(api, pk) for pk in (ended.id, started.id, renewed.id)}
            == {ended.id: "INACTIVE", started.id: "ACTIVE", renewed.id: "ACTIVE"}
        )

        # Started again: nothing new, neither in the feed nor in the delivery log.
        call_command("worker", "--once", "--worker-id", "again")
        assert len(feed(api)) == len(written) + len(caught_up)

        log = api.get(f"/v1/webhooks/{hook['id']}/deliveries", {"limit": 100}).json()
        assert log["count"] == len(written) + len(caught_up)
        assert sorted(r["eventId"] for r in log["results"]) == sorted(
            e["id"] for e in written + caught_up
        )
        due = WebhookDelivery.objects.filter(status="pending").values_list("pk", flat=True)
        assert {delivery_attempt(delivery_id=pk) for pk in due} == {"delivered"}
    assert sorted(p["id"] for p in receiver.received) == sorted(
        e["id"] for e in written + caught_up
    )
    log = api.get(f"/v1/webhooks/{hook['id']}/deliveries", {"limit": 100}).json()
    assert {(r["status"], r["attempts"]) for r in log["results"]} == {("delivered", 1)}


def test_catch_up_is_bounded_and_starts_with_the_installation(carrier, settings):
    assert calendar_days_due(day=today()) == [today()]  # no day ever ran: only today
    last_ran(today() - 3 * DAY)
    assert calendar_days_due(day=today()) == [today() - 2 * DAY, today() - DAY, today()]
    CalendarMark.objects.all().delete()
    last_ran(today() - 100 * DAY)
    settings.CALENDAR_CATCH_UP_DAYS = 5
    assert calendar_days_due(day=today()) == [today() - n * DAY for n in range(4, -1, -1)]
    too_old = PolicyFactory(
        client=carrier, effective_date=today() - 300 * DAY, expiration_date=today() - 10 * DAY
    )
    recent = PolicyFactory(
        client=carrier, effective_date=today() - 300 * DAY, expiration_date=today() - 3 * DAY
    )
    recorded_before_the_outage(too_old, recent)
    assert calendar_catch_up(day=today()) >= 1
    expired = CalendarMark.objects.filter(type="policy.expired")
    assert list(expired.values_list("policy_id", "day")) == [(recent.id, today() - 3 * DAY)]
    assert calendar_catch_up(day=today()) == 0


def test_catch_up_queries_per_day_do_not_grow_with_policies(carrier):
    def catch_up(per_day: int, until: dt.date) -> int:
        """Four days to catch up through `until`, `per_day` policies expiring on three."""
        policies = [
            PolicyFactory(
                client=ClientFactory(agency=carrier.agency),
                effective_date=until - 300 * DAY,
                expiration_date=until - n * DAY,
            )
            for n in range(1, 4)
            for _ in range(per_day)
        ]
        recorded_before_the_outage(*policies)
        last_ran(until - 4 * DAY)
        with CaptureQueriesContext(connection) as queries:
            emitted = calendar_catch_up(day=until)
        assert emitted == 3 * per_day * 2  # policy.expired and the carrier's status change
        return len(queries)

    assert catch_up(1, today() - 10 * DAY) == catch_up(6, today())
