"""A policy written on its 30-day mark while that day's calendar job runs is announced once
(contract section 14), whichever commits first. Before, on PostgreSQL, the job's reads did not
see the uncommitted policy and the write did not see the job's uncommitted day mark, so
neither announced it and the notice never came. The job and the writes now take one advisory
lock (apps.coverages.calendar._calendar_lock): the job alone, the writes shared.

PostgreSQL (CI's second pass): each thread has its own connection and the database
arbitrates, as between the worker's and a web server's processes; SQLite serialises writers."""

from __future__ import annotations

import datetime as dt
import threading

from django.db import connection, transaction

from apps.core.dates import today
from apps.coverages.calendar import calendar_run
from apps.events.models import Event
from apps.masterdata.models import CoverageType
from apps.policies.services import policy_create
from tests.conftest import CONCURRENT_WRITERS
from tests.events.races import while_holding

pytestmark = CONCURRENT_WRITERS
DAY = dt.timedelta(days=1)


def _notices() -> list[tuple[int, int]]:
    events = Event.objects.filter(type="policy.expiring").order_by("id")
    return [(e.data["policyId"], e.data["daysLeft"]) for e in events]


def _body(carrier) -> dict:
    return {
        "clientId": carrier.id,
        "effectiveDate": (today() - 300 * DAY).isoformat(),
        "expirationDate": (today() + 30 * DAY).isoformat(),
        "coverageType": "AL",
    }


def test_a_policy_committed_while_the_days_job_runs_is_announced_once(
    master_data_back, make_api, manager, carrier
):
    api = make_api(manager)

    [answer] = while_holding(
        lambda: calendar_run(day=today()),
        lambda: api.post("/v1/policies", _body(carrier), format="json"),
    )
    assert answer.status_code == 201, answer.content
    assert _notices() == [(answer.json()["id"], 30)]


def test_the_days_job_starting_while_a_policy_is_written_announces_it_once(
    master_data_back, manager, carrier
):
    created = []

    def write():
        created.append(
            policy_create(
                user=manager,
                client_id=carrier.id,
                effective_date=today() - 300 * DAY,
                expiration_date=today() + 30 * DAY,
                coverage_type=CoverageType.objects.get(code="AL"),
            )
        )

    [emitted] = while_holding(write, lambda: calendar_run(day=today()))
    assert emitted >= 1
    assert _notices() == [(created[0].id, 30)]


def test_a_policy_write_off_the_marks_does_not_wait_for_the_days_job(
    master_data_back, make_api, manager, carrier
):
    """Only a write landing on a notice mark takes the job's lock: another policy write
    finishes while the job's transaction is still open."""
    api = make_api(manager)
    body = {**_body(carrier), "expirationDate": (today() + 200 * DAY).isoformat()}
    created = api.post("/v1/policies", body, format="json")
    assert created.status_code == 201, created.content
    job_committed, answers = threading.Event(), []

    def write():
        answer = api.put(
            f"/v1/policies/{created.json()['id']}", {"description": "x"}, format="json"
        )
        answers.append((answer.status_code, job_committed.is_set()))
        connection.close()

    with transaction.atomic():
        calendar_run(day=today())
        other = threading.Thread(target=write)
        other.start()
        other.join(5)
    job_committed.set()
    other.join(30)
    assert answers == [(200, False)]
