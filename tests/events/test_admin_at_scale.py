"""The back-office's list of change events reads, on each view, its page and one count: nothing
else that grows with the change feed (its filters are offered from the catalogue of types and
fixed date ranges, not read from the events), scoped by agency."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.events.models import Event
from apps.events.services import EVENT_TYPES, event_emit

pytestmark = pytest.mark.django_db
PATH = "/admin/events/event/"


def shown(page: str) -> list[int]:
    return [int(pk) for pk in re.findall(rf'href="{PATH}(\d+)/change/', page)]


@pytest.fixture
def feed(agency, other_agency):
    def emit(type, agency, days_ago=0):
        event = event_emit(type=type, agency_id=agency.id, client_id=None, data={})
        Event.objects.filter(pk=event.pk).update(
            occurred_at=timezone.now() - dt.timedelta(days=days_ago)
        )
        return event.pk

    return {
        "recent update": emit("client.updated", agency),
        "old update": emit("client.updated", agency, days_ago=40),
        "recent creation": emit("client.created", agency, days_ago=2),
        "theirs": emit("client.updated", other_agency),
    }


def test_a_view_reads_its_page_and_one_count(staff_client, feed):
    with CaptureQueriesContext(connection) as queries:
        page = staff_client.get(PATH).content.decode()
    statements = [q["sql"] for q in queries.captured_queries if '"events_event"' in q["sql"]]
    assert not [sql for sql in statements if "DISTINCT" in sql or "MIN(" in sql], statements
    assert len([sql for sql in statements if sql.startswith("SELECT COUNT(*)")]) == 1
    assert sorted(shown(page)) == sorted(
        feed[k] for k in ("recent update", "old update", "recent creation")
    )
    assert all(f"?type={name}" in page for name in EVENT_TYPES)  # the catalogue, offered


def test_the_type_and_date_filters_keep_to_the_staff_members_agencies(staff_client, feed):
    updates = shown(staff_client.get(PATH, {"type": "client.updated"}).content.decode())
    assert sorted(updates) == sorted([feed["recent update"], feed["old update"]])
    page = staff_client.get(PATH).content.decode()
    past_week = re.search(r'href="(\?occurred_at__gte=[^"]+)"[^>]*>Past 7 days', page)
    assert past_week, "the date filter offers the past 7 days"
    query = past_week.group(1).replace("&amp;", "&")
    recent = shown(staff_client.get(PATH + query).content.decode())
    assert sorted(recent) == sorted([feed["recent update"], feed["recent creation"]])
    assert shown(staff_client.get(PATH, {"type": "webhook.ping"}).content.decode()) == []
