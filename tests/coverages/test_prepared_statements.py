"""The statements every request asks again with other values are prepared on the PostgreSQL
server, once per connection (apps.core.postgresql, issue 18); the ORM's other SQL is not.

Runs against PostgreSQL only (`make postgres-test`): SQLite has no server-side statements.
"""

from __future__ import annotations

import pytest
from django.db import DataError, NotSupportedError, connection, transaction
from django_prometheus.db import execute_total
from rest_framework.test import APIClient

from tests.conftest import bearer_for
from tests.coverages.conftest import VIN
from tests.factories import PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only"),
    pytest.mark.django_db,
]


def _prepared() -> dict[str, int]:
    """The statements prepared on the test's connection (the test client's requests run in
    this thread, so on it; earlier tests' statements stay there too), each with the number of
    times it ran."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def _ran(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {sql: n - before.get(sql, 0) for sql, n in after.items() if n != before.get(sql, 0)}


def _queries_counted() -> float:
    return execute_total.labels("default", "postgresql")._value.get()


def test_the_callers_statement_is_prepared_once_and_still_counted(api, django_assert_num_queries):
    assert api.get("/v1/me").status_code == 200
    prepared = _prepared()
    counted = _queries_counted()
    for _ in range(3):
        with django_assert_num_queries(1):  # Django's wrappers still see it
            me = api.get("/v1/me")
        assert me.status_code == 200
    assert me.json()["agencies"]
    assert _queries_counted() - counted == 3  # and so does the /metrics counter
    [(caller, runs)] = _ran(prepared, _prepared()).items()  # nothing else ran prepared
    assert "accounts_apikey" in caller and "$1" in caller and runs == 3
    assert [sql for sql in _prepared() if "accounts_apikey" in sql] == [caller]


def test_a_refused_key_is_refused_on_the_prepared_statement(api, manager):
    assert api.get("/v1/me").status_code == 200
    prepared = _prepared()
    stranger = APIClient()
    stranger.credentials(
        HTTP_APIKEY="not-a-key", HTTP_AUTHORIZATION=f"Bearer {bearer_for(manager)}"
    )
    assert stranger.get("/v1/me").status_code == 401
    assert list(_ran(prepared, _prepared()).values()) == [1]


def test_verification_statements_are_prepared_and_answer_each_call(api, covered):
    for _ in range(2):  # first sighting of the shape, then prepared
        [one] = api.get("/v1/coverages/clients?dot=1234567").json()["results"]
        [unit] = api.get(f"/v1/coverages/vehicles?vin={VIN}").json()["results"]
        assert one["verified"] and unit["verified"]
    prepared = _prepared()
    [one] = api.get("/v1/coverages/clients?dot=1234567").json()["results"]
    assert one["coverages"][0]["limits"][0]["amount"] == "1000000.00"
    ran = _ran(prepared, _prepared())
    # The caller's, then the client's with its policies and their limits (one statement).
    assert len(ran) == 2
    [client] = [sql for sql in ran if '"clients_client"."dot"' in sql]
    assert '"policies_policylimit"' in client
    assert api.get("/v1/coverages/clients?dot=7654321").status_code == 404
    assert len(_prepared()) == len(prepared)  # another DOT reuses the same statements
    [unit] = api.get(f"/v1/coverages/vehicles?vin={VIN}").json()["results"]
    assert unit["verified"]
    ran = _ran(prepared, _prepared())
    # The unit's: its covering periods, their policies and limits in the same statement.
    [vehicle] = [sql for sql in ran if '"vehicles_vehicle"."serial_number"' in sql]
    assert '"coverages_vehiclecoverage"' in vehicle and '"policies_policylimit"' in vehicle
    # Two DOTs: the clients' with their policies, then the limits' (two, prepared too).
    for _ in range(2):  # first sighting of the shape, then prepared
        api.get("/v1/coverages/clients?dots=1234567&dots=7654321")
    before = _prepared()
    api.get("/v1/coverages/clients?dots=1234567&dots=7654321")
    assert len(_ran(before, _prepared())) == 3 and len(_prepared()) == len(before)


def test_switched_off_nothing_is_prepared(api, covered, settings):
    settings.DATABASE_PREPARED_STATEMENTS = False
    prepared = _prepared()
    for _ in range(3):
        assert api.get("/v1/me").status_code == 200
        assert api.get("/v1/coverages/clients?dot=1234567").json()["results"][0]["verified"]
    assert _prepared() == prepared


@pytest.mark.django_db(transaction=True)
def test_a_statement_whose_column_changed_type_underneath_is_prepared_afresh():
    # A migration run from another connection (a deploy's `migrate` while the old nodes serve)
    # changes the type of a column a prepared statement returns: PostgreSQL then refuses the
    # statement ("cached plan must not change result type") on every later call unless it is
    # prepared again. Outside a transaction the connection recovers within the call; inside
    # one the call fails and the transaction's rollback makes the next call recover.
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE prepared_probe (a integer)")
        cursor.execute("INSERT INTO prepared_probe VALUES (1)")
    other = connection.get_new_connection(connection.get_connection_params())
    other.autocommit = True

    def ask():
        with connection.prepared_statements(), connection.cursor() as cursor:
            cursor.execute("SELECT a FROM prepared_probe WHERE a = %s", [1])
            return cursor.fetchall()

    try:
        assert ask() == [(1,)] and ask() == [(1,)]
        assert any("prepared_probe" in sql for sql in _prepared())
        other.execute("ALTER TABLE prepared_probe ALTER COLUMN a TYPE bigint")
        assert ask() == [(1,)]
        assert ask() == [(1,)]
        other.execute("ALTER TABLE prepared_probe ALTER COLUMN a TYPE numeric")
        with pytest.raises(NotSupportedError), transaction.atomic():
            ask()
        assert ask() == [(1,)]
    finally:
        other.execute("DROP TABLE prepared_probe")
        other.close()


def test_a_list_pages_rows_are_planned_with_their_joins_in_written_order(api, covered):
    # The rows' statement (ids joined to what they point to) runs with join_collapse_limit 1;
    # the session's setting is back to its default before and after, and nothing is counted.
    seen = []

    def watch(execute, sql, params, many, context):
        if '"vehicles_vehicle"."id" = ' in sql:  # `= %s` for one id, `= ANY(%s)` for more
            seen.append(connection.connection.execute("SHOW join_collapse_limit").fetchone()[0])
        return execute(sql, params, many, context)

    default = connection.connection.execute("SHOW join_collapse_limit").fetchone()[0]
    with connection.execute_wrapper(watch):
        response = api.get("/v1/vehicles?limit=25&sort=unit")
    assert response.status_code == 200 and response.json()["results"]
    assert seen == ["1"]
    assert connection.connection.execute("SHOW join_collapse_limit").fetchone()[0] == default


def test_the_join_order_setting_is_not_kept_by_a_failed_transaction():
    with (
        pytest.raises(DataError),
        transaction.atomic(),
        connection.joins_in_written_order(),
        connection.cursor() as cursor,
    ):
        cursor.execute("SELECT 1 / 0")
    with connection.cursor() as cursor:
        cursor.execute("SHOW join_collapse_limit")
        assert cursor.fetchone()[0] != "1"


def test_a_list_pages_rows_are_selected_by_key_and_agency_and_prepared(api, covered, carrier):
    # The rows' statement names the page's ids and the caller's agencies, nothing of the list's
    # own filters, so it has one text for every page and filter: prepared on the server once.
    VehicleFactory(client=carrier, unit="Z-2")
    seen = []

    def watch(execute, sql, params, many, context):
        if '"vehicles_vehicle"."id" = ANY(' in sql:
            seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watch):
        for query in ("limit=25&sort=unit", "limit=10&sort=-make", "unit=nothing-like-it&limit=5"):
            assert api.get(f"/v1/vehicles?{query}").status_code == 200
    first, second = seen  # the third page has no ids, hence no rows statement
    assert first == second
    where = first.split(" WHERE ", 1)[1]
    assert '"vehicles_vehicle"."agency_id" IN (' in where and "unit" not in where
    assert any('"vehicles_vehicle"."id" = ANY(' in text for text in _prepared())


def test_an_annotated_list_reads_its_rows_as_before(api, covered):
    # The policies' list is annotated with each policy's status: its rows keep its statement.
    seen = []

    def watch(execute, sql, params, many, context):
        if 'FROM "policies_policy"' in sql and '"policies_policy"."id" IN (' in sql:
            seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watch):
        response = api.get("/v1/policies?limit=25")
    assert response.status_code == 200 and response.json()["results"]
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("path", "table"),
    [("/v1/vehicles/{unit}", "vehicles_vehicle"), ("/v1/policies/{policy}", "policies_policy")],
)
def test_a_records_statement_is_prepared_and_planned_in_written_order(api, covered, path, table):
    # One record shown whole (its joins to everything it points to were planned for 3-6 ms on
    # every request): its statement is the same text for every id, prepared once, planned with
    # join_collapse_limit 1; its prefetches are read afterwards with the session's default.
    policy, unit = covered
    other = VehicleFactory(client=unit.client, unit="Z-2")
    VehicleCoverageFactory(vehicle=other, policy=PolicyFactory(client=unit.client))
    second = {"unit": other.pk, "policy": other.coverages.get().policy_id}
    settings = []

    def watch(execute, sql, params, many, context):
        main = sql.startswith(f'SELECT "{table}"."id"') and f'"{table}"."id" = ' in sql
        setting = connection.connection.execute("SHOW join_collapse_limit").fetchone()[0]
        settings.append((main, setting))
        return execute(sql, params, many, context)

    default = connection.connection.execute("SHOW join_collapse_limit").fetchone()[0]
    prepared = _prepared()
    with connection.execute_wrapper(watch):
        for ids in ({"unit": unit.pk, "policy": policy.pk}, second):
            response = api.get(path.format(**ids))
            assert response.status_code == 200 and response.json()["id"] in ids.values()
    mains = [setting for main, setting in settings if main]
    assert mains == ["1", "1"]
    assert {setting for main, setting in settings if not main} == {default}  # prefetches too
    ran = _ran(prepared, _prepared())
    [(statement, runs)] = [(sql, n) for sql, n in ran.items() if f'FROM "{table}"' in sql]
    assert runs == 2 and f'"{table}"."id" = $' in statement
    assert connection.connection.execute("SHOW join_collapse_limit").fetchone()[0] == default
