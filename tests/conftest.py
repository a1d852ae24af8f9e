"""Shared fixtures: master data once per session, users of two agencies, real API clients."""

from __future__ import annotations

import datetime as dt
import subprocess
import time

import pytest
from django.core.cache import cache
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.services import api_key_create
from apps.accounts.tokens import RefreshToken
from apps.core.dates import today
from apps.demo.access import groups_ensure
from apps.masterdata.services import masterdata_load
from tests.factories import AgencyFactory, ClientFactory, UserFactory
from tests.processes import free_port, stop, wait_for_port

API_KEY = "test-api-key-0123456789"
# A test of writers racing on connections of their own (threads), where the database arbitrates
# as between two server processes: PostgreSQL (CI's second pass); SQLite serialises writers.
CONCURRENT_WRITERS = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs a server database (PostgreSQL)"
    ),
]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        masterdata_load()


@pytest.fixture(autouse=True)
def _isolated_side_effects(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    cache.clear()
    yield
    cache.clear()


# A test reads "today" (the service's, apps.core.dates.today) in its fixtures and again in its
# assertions, so one that ran across the service's midnight would compare two days. No test
# starts in the last MIDNIGHT_MARGIN of the service's day: in a run that crosses midnight, the
# test due then waits for the next day (tests read today() when they run, never at import).
MIDNIGHT_MARGIN = dt.timedelta(seconds=10)


@pytest.fixture(autouse=True)
def _not_across_midnight():
    midnight = timezone.make_aware(dt.datetime.combine(today() + dt.timedelta(days=1), dt.time()))
    left = (midnight - timezone.now()).total_seconds()  # below 0 if midnight came meanwhile
    if left < MIDNIGHT_MARGIN.total_seconds():
        time.sleep(max(left, 0) + 0.05)


@pytest.fixture
def redis_url():
    """A throwaway redis-server on a free loopback port (mark the test `needs_redis`)."""
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process)


@pytest.fixture
def api_key(db) -> str:
    api_key_create(name="tests", raw_key=API_KEY)
    return API_KEY


@pytest.fixture
def groups(db):
    return groups_ensure()


@pytest.fixture
def agency(db):
    return AgencyFactory(name="Demo Agency")


@pytest.fixture
def other_agency(db):
    return AgencyFactory(name="Other Agency")


@pytest.fixture
def manager(groups, agency):
    return UserFactory(username="manager", agencies=[agency], groups=[groups[0]])


@pytest.fixture
def viewer(groups, agency):
    return UserFactory(username="viewer", agencies=[agency], groups=[groups[1]])


@pytest.fixture
def other_manager(groups, other_agency):
    return UserFactory(username="other-manager", agencies=[other_agency], groups=[groups[0]])


@pytest.fixture
def carrier(agency):
    """A client of the caller's agency."""
    return ClientFactory(agency=agency, client_name="Lone Star Freight", dot="1234567")


@pytest.fixture
def rival(other_agency):
    """A client of another agency: never visible to the caller."""
    return ClientFactory(agency=other_agency, client_name="Rival Transport", dot="7654321")


@pytest.fixture
def powerless(agency):
    """A member of the agency with no permission at all."""
    return UserFactory(username="powerless", agencies=[agency])


def staff_member(agencies, groups, username="staff", group=0):
    """A back-office user of `agencies`, in the managers' group unless `group` says otherwise."""
    return UserFactory(username=username, agencies=agencies, groups=[groups[group]], is_staff=True)


@pytest.fixture
def staff(groups, agency):
    return staff_member([agency], groups)


@pytest.fixture
def staff_client(client, staff):
    """Django's test client logged in to the admin as `staff` (also at `.user`)."""
    client.force_login(staff)
    client.user = staff
    return client


def assert_problem(response, status: int) -> dict:
    """An RFC 9457 problem+json answer with this status; its body."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status
    assert set(body) >= {"type", "title", "status", "detail", "errors"}
    return body


def page_ids(response) -> list[int]:
    """The ids of a 200 list page, in its order."""
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def ids_statement(queries, table: str) -> str:
    """Of a list request's captured queries, the one that orders `table`'s ids for the page."""
    (sql,) = [
        q["sql"]
        for q in queries.captured_queries
        if f'FROM "{table}"' in q["sql"] and "ORDER BY" in q["sql"]
    ]
    return sql


def user_rows_read(queries) -> int:
    """How many rows of the user table a request's captured queries read: each SELECT that
    names the table is run again, counted."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    table = get_user_model()._meta.db_table
    rows = 0
    with connection.cursor() as cursor:
        for query in queries.captured_queries:
            sql = query["sql"]
            if sql.lstrip().upper().startswith("SELECT") and f'"{table}"' in sql:
                cursor.execute(f"SELECT COUNT(*) FROM ({sql}) AS read_rows")
                rows += cursor.fetchone()[0]
    return rows


def bearer_for(user) -> str:
    return str(RefreshToken.for_user(user).access_token)


@pytest.fixture
def make_api(api_key):
    """An APIClient carrying the real apiKey header and, for a user, a real access token."""

    def make(user=None) -> APIClient:
        client = APIClient()
        headers = {"HTTP_APIKEY": api_key}
        if user is not None:
            headers["HTTP_AUTHORIZATION"] = f"Bearer {bearer_for(user)}"
        client.credentials(**headers)
        return client

    return make


@pytest.fixture
def api(make_api, manager) -> APIClient:
    return make_api(manager)


@pytest.fixture
def viewer_api(make_api, viewer) -> APIClient:
    return make_api(viewer)


@pytest.fixture
def other_api(make_api, other_manager) -> APIClient:
    return make_api(other_manager)


@pytest.fixture
def master_data_back(transactional_db):
    """For transactional tests, which pytest-django runs last: each one empties every table
    when it ends, so the next one loads the master data again first."""
    from apps.masterdata.models import State

    if not State.objects.exists():
        masterdata_load()


@pytest.fixture
def compiled(monkeypatch):
    """The models whose SELECT the ORM compiles, in order (apps.core.prepared's tests: what a
    prepared query no longer compiles)."""
    from django.db.models.sql.compiler import SQLCompiler

    seen = []
    original = SQLCompiler.as_sql

    def as_sql(self, *args, **kwargs):
        seen.append(self.query.model)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SQLCompiler, "as_sql", as_sql)
    return seen
