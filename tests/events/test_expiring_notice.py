"""policy.expiring fires 30 and 7 days before a policy's expiration, once each (contract
section 14), also for a policy written on its mark day after that day's calendar job ran
(at worker start-up, at midnight): the write announces it, with the job's own mark, so
neither a second write nor a second run of the job announces it again."""

from __future__ import annotations

import datetime as dt
import importlib

import pytest
from django.apps import apps as django_apps
from django.utils import timezone

from apps.core.dates import today
from apps.coverages.calendar import calendar_run
from apps.events.models import CalendarMark
from apps.policies.models import Policy

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


def notices(api) -> list[tuple[int, int, str]]:
    response = api.get("/v1/events", {"limit": 500, "type": "policy.expiring"})
    assert response.status_code == 200, response.content
    return [
        (e["data"]["policyId"], e["data"]["daysLeft"], e["data"]["asOf"])
        for e in response.json()["results"]
    ]


def create(api, client, expires: dt.date) -> int:
    body = {
        "clientId": client.id,
        "effectiveDate": (today() - 300 * DAY).isoformat(),
        "expirationDate": expires.isoformat(),
        "coverageType": "AL",
    }
    response = api.post("/v1/policies", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def expire_on(api, policy_id: int, expires: dt.date) -> None:
    body = {"expirationDate": expires.isoformat()}
    response = api.put(f"/v1/policies/{policy_id}", body, format="json")
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("days", [30, 7])
def test_policy_created_on_its_mark_after_the_days_job_is_announced_once(api, carrier, days):
    calendar_run(day=today())
    policy_id = create(api, carrier, today() + days * DAY)
    assert notices(api) == [(policy_id, days, today().isoformat())]
    expire_on(api, policy_id, today() + (days + 1) * DAY)
    expire_on(api, policy_id, today() + days * DAY)  # back on the mark: announced already
    assert calendar_run(day=today()) == 0
    assert notices(api) == [(policy_id, days, today().isoformat())]


def test_expiration_moved_onto_its_mark_after_the_days_job_is_announced_once(api, carrier):
    policy_id = create(api, carrier, today() + 100 * DAY)
    calendar_run(day=today())
    assert notices(api) == []
    expire_on(api, policy_id, today() + 7 * DAY)
    expire_on(api, policy_id, today() + 7 * DAY)
    assert notices(api) == [(policy_id, 7, today().isoformat())]


def test_policy_written_before_the_days_job_is_announced_by_the_job_once(api, carrier):
    created = create(api, carrier, today() + 30 * DAY)
    moved = create(api, carrier, today() + 100 * DAY)
    expire_on(api, moved, today() + 7 * DAY)
    assert notices(api) == []  # the day's job announces them
    calendar_run(day=today())
    expire_on(api, created, today() + 30 * DAY)
    assert calendar_run(day=today()) == 0
    assert sorted(notices(api)) == [
        (created, 30, today().isoformat()),
        (moved, 7, today().isoformat()),
    ]


def test_policy_off_its_mark_after_the_days_job_is_not_announced(api, carrier):
    calendar_run(day=today())
    policy_id = create(api, carrier, today() + 29 * DAY)
    expire_on(api, policy_id, today() + 8 * DAY)
    assert notices(api) == []


def test_policy_moved_from_its_30_day_mark_to_its_7_day_mark_after_the_job_gets_both(api, carrier):
    announced_by_job = create(api, carrier, today() + 30 * DAY)
    calendar_run(day=today())
    announced_by_write = create(api, carrier, today() + 30 * DAY)
    for policy_id in (announced_by_job, announced_by_write):
        expire_on(api, policy_id, today() + 7 * DAY)
        expire_on(api, policy_id, today() + 30 * DAY)  # each notice once, however many moves
        expire_on(api, policy_id, today() + 7 * DAY)
    assert calendar_run(day=today()) == 0
    on = today().isoformat()
    assert notices(api) == [
        (announced_by_job, 30, on),
        (announced_by_write, 30, on),
        (announced_by_job, 7, on),
        (announced_by_write, 7, on),
    ]


def test_marks_of_the_previous_code_claim_the_notice_they_announced(api, carrier):
    """The upgrade day: the previous code marked either notice `policy.expiring`; the
    migration renames each after its event, so neither notice comes twice that day."""
    migration = importlib.import_module(
        "apps.events.migrations.0003_expiring_marks_name_their_notice"
    )
    at_30 = create(api, carrier, today() + 30 * DAY)
    at_7 = create(api, carrier, today() + 7 * DAY)
    calendar_run(day=today())
    previous = CalendarMark.objects.filter(type__startswith="policy.expiring:")
    assert previous.update(type="policy.expiring") == 2  # as the previous code wrote them
    migration.name_the_notice(django_apps, None)

    for policy_id, other in ((at_30, 7), (at_7, 30)):
        expire_on(api, policy_id, today() + other * DAY)
        expire_on(api, policy_id, today() + (37 - other) * DAY)  # back: announced already
        expire_on(api, policy_id, today() + other * DAY)
    on = today().isoformat()
    assert notices(api) == [(at_30, 30, on), (at_7, 7, on), (at_30, 7, on), (at_7, 30, on)]


# A policy cancelled effective before (or on) its expiration never expires: it ends by its
# cancellation, which `policy.cancelled` announced. Only a policy that will reach its
# expiration date in force, and so get `policy.expired`, is announced as expiring.


def cancel_on(api, policy_id: int, cancelled: dt.date | None) -> None:
    body = {"cancellationDate": None if cancelled is None else cancelled.isoformat()}
    response = api.put(f"/v1/policies/{policy_id}", body, format="json")
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("days", [30, 7])
@pytest.mark.parametrize("cancelled_in", [3, "expiration"])
def test_policy_cancelled_effective_by_its_expiration_is_not_expiring(
    api, carrier, days, cancelled_in
):
    ends_by_cancellation = create(api, carrier, today() + days * DAY)
    cancel_on(
        api, ends_by_cancellation, today() + (days if cancelled_in == "expiration" else 3) * DAY
    )
    expires = create(api, carrier, today() + days * DAY)
    cancel_on(api, expires, today() + (days + 1) * DAY)  # after its expiration: it expires first
    calendar_run(day=today())
    assert notices(api) == [(expires, days, today().isoformat())]


def test_policy_written_on_its_mark_after_the_job_with_an_earlier_cancellation_is_not_expiring(
    api, carrier
):
    calendar_run(day=today())
    policy_id = create(api, carrier, today() + 60 * DAY)
    cancel_on(api, policy_id, today() + 2 * DAY)
    expire_on(api, policy_id, today() + 7 * DAY)  # onto its mark, cancelled before it
    assert notices(api) == []
    cancel_on(api, policy_id, None)  # the cancellation withdrawn: it will expire after all
    assert notices(api) == [(policy_id, 7, today().isoformat())]


def test_missed_days_do_not_announce_a_policy_cancelled_before_its_expiration(api, carrier):
    calendar_run(day=today() - 3 * DAY)
    policy_id = create(api, carrier, today() + 28 * DAY)  # its 30-day mark was two days ago
    cancel_on(api, policy_id, today() + 10 * DAY)
    # Recorded before the missed days, as a policy the job would have seen then.
    Policy.objects.filter(pk=policy_id).update(created_at=timezone.now() - 5 * DAY)
    for day in (today() - 2 * DAY, today() - DAY, today()):
        calendar_run(day=day)
    assert notices(api) == []
