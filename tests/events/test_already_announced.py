"""What a daily comparison has already announced (`already_announced`, apps.events.selectors),
the one rule the calendar's status events and compliance.changed share: a change announced
for the day by a write earlier that day is the comparison's starting point; a subject a later
day's write announced is left out; one query for every watched type, none when nothing is
watched."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.dates import today
from apps.events.selectors import Watched, already_announced
from apps.events.services import event_emit

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


def announce(carrier, type_: str, to: str, as_of: dt.date, **subject) -> None:
    data = {**subject, "from": "X", "to": to, "as_of": as_of}
    event_emit(type=type_, agency_id=carrier.agency_id, client_id=carrier.pk, data=data)


def test_the_days_announcement_restates_before_and_a_later_one_drops_the_subject(carrier):
    day = today() - 2 * DAY
    other = carrier.pk + 1000
    announce(carrier, "carrier.status_changed", "INACTIVE", day, client_id=carrier.pk)
    announce(carrier, "vehicle.status_changed", "ACTIVE", day + DAY, vehicle_id=7)
    announce(carrier, "compliance.changed", "FAIL", day, client_id=carrier.pk, profile_id=3)
    announce(carrier, "carrier.status_changed", "ACTIVE", day - 2 * DAY, client_id=other)
    before_c = {carrier.pk: (1, "ACTIVE"), other: (1, "INACTIVE")}
    after_c = {carrier.pk: (1, "INACTIVE"), other: (1, "ACTIVE")}
    before_v, after_v = {7: (1, carrier.pk, "INACTIVE"), 8: (1, carrier.pk, "ACTIVE")}, {7: ()}
    before_p = {(carrier.pk, 3): (1, "PASS", []), (carrier.pk, 4): (1, "PASS", [])}
    after_p = {(carrier.pk, 3): (1, "FAIL", [])}

    with CaptureQueriesContext(connection) as queries:
        already_announced(
            day=day,
            watched={
                "carrier.status_changed": Watched(before_c, after_c, ("clientId",), 1),
                "vehicle.status_changed": Watched(before_v, after_v, ("vehicleId",), 2),
                "compliance.changed": Watched(before_p, after_p, ("clientId", "profileId"), 1),
            },
        )

    assert len(queries) == 1
    # announced for the day: the comparison starts from it (no change left to announce)
    assert before_c == {carrier.pk: (1, "INACTIVE"), other: (1, "INACTIVE")}
    assert before_p == {(carrier.pk, 3): (1, "FAIL", []), (carrier.pk, 4): (1, "PASS", [])}
    # announced by a later day's write: not news for this day; an earlier one does not count
    assert (before_v, after_v) == ({8: (1, carrier.pk, "ACTIVE")}, {})


def test_nothing_watched_reads_nothing(carrier):
    with CaptureQueriesContext(connection) as queries:
        already_announced(day=today(), watched={"compliance.changed": Watched({}, {}, ("a",), 1)})
    assert len(queries) == 0
