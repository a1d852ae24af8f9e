"""Shared fixtures: master data once per session, users of two agencies, real API clients."""

from __future__ import annotations

import datetime as dt
import fcntl
import subprocess
import time
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management.color import no_style
from django.db import connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.services import api_key_create
from apps.accounts.tokens import RefreshToken
from apps.core.dates import today
from apps.demo.access import groups_ensure
from apps.masterdata.services import masterdata_load
from tests.factories import AgencyFactory, ClientFactory, UserFactory
from tests.processes import free_port, migrate_sqlite, stop, wait_for_port

API_KEY = "test-api-key-0123456789"
# A test of writers racing on connections of their own (threads), where the database arbitrates
# as between two server processes: PostgreSQL (CI's second pass); SQLite serialises writers.
CONCURRENT_WRITERS = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs a server database (PostgreSQL)"
    ),
]


# The fixtures through which a test reaches the test database (pytest-django's).
DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
    "live_server",
}


def pytest_collection_modifyitems(config, items):
    """On PostgreSQL (CI's second pass, `make postgres-test`) only the tests that use the test
    database run: a test that uses none, or runs servers on a SQLite file of its own (a copy
    of `migrated_sqlite`), does exactly what it did in `make test`'s SQLite pass."""
    if connection.vendor != "postgresql":
        return
    elsewhere = [
        item
        for item in items
        if "migrated_sqlite" in item.fixturenames
        or not (item.get_closest_marker("django_db") or DATABASE_FIXTURES & set(item.fixturenames))
    ]
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        left = set(map(id, elsewhere))
        items[:] = [item for item in items if id(item) not in left]


# The master data as masterdata_load wrote it at the start of the session, table by table
# (columns, rows): a transactional test empties every table when it ends, and the next one puts
# these rows back as they were (same ids) in one statement per table instead of loading the
# 30,000 cities again through the ORM (2 s a test on SQLite, more on PostgreSQL).
MASTER_ROWS: dict[str, tuple[list[str], list[tuple]]] = {}


def _master_models():
    from django.apps import apps

    return list(apps.get_app_config("masterdata").get_models())


def _master_tables():
    for model in _master_models():
        columns = [f.column for f in model._meta.concrete_fields if not f.generated]
        yield model._meta.db_table, columns


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        masterdata_load()
        # The two standard groups, as every test that names `groups` wants them: there each
        # test then finds them in a few reads instead of writing them and their 150
        # permissions again.
        groups_ensure()
        quote = connection.ops.quote_name
        with connection.cursor() as cursor:
            for table, columns in _master_tables():
                cursor.execute(f"SELECT {', '.join(map(quote, columns))} FROM {quote(table)}")
                MASTER_ROWS[table] = (columns, cursor.fetchall())


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


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory, worker_id) -> Path:
    """A SQLite file migrated once per test run, shared by pytest-xdist's workers: the tests
    that start servers of their own copy it rather than each migrating a file again (17 s)."""
    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent  # the run's directory, above each worker's own
    path = root / "migrated.sqlite3"
    with open(root / "migrated.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker migrates, the others wait for it
        if not path.exists():
            fresh = root / "migrating" / "db.sqlite3"
            fresh.parent.mkdir(exist_ok=True)
            migrate_sqlite(fresh)
            fresh.rename(path)
    return path


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
    when it ends, so the next one puts the session's master data back first (MASTER_ROWS)."""
    from apps.masterdata.models import State

    if State.objects.exists():
        return
    quote = connection.ops.quote_name
    with transaction.atomic(), connection.cursor() as cursor:
        for table, (columns, rows) in MASTER_ROWS.items():
            if not rows:
                continue
            names = ", ".join(map(quote, columns))
            if connection.vendor == "postgresql":
                with cursor.cursor.copy(f"COPY {quote(table)} ({names}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                marks = ", ".join(["%s"] * len(columns))
                cursor.executemany(f"INSERT INTO {quote(table)} ({names}) VALUES ({marks})", rows)
        # The ids were given: each table's sequence moves past them, as after a load (a flush
        # that reset the sequences would otherwise hand the next row an id already taken).
        for statement in connection.ops.sequence_reset_sql(no_style(), _master_models()):
            cursor.execute(statement)


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
