"""The lists' searches read an index (issue 18): a unit ignoring case, a VIN's start, a policy
number ignoring case, and the contains-searches (a client's name, a unit's owner and garaging
address, a driver's names and email) through trigram indexes on PostgreSQL. Each read all of an
agency's records before (a 302,100-unit agency: 24-160 ms for a count and a page). `?q=` of
the policies tests each policy's own columns against the clients and insurers so named, found
once, rather than joining both to every policy."""

from __future__ import annotations

import copy
from unittest import mock
from urllib.parse import quote

import pytest
from django.db import connection
from django.http import QueryDict

from apps.clients.filtersets import ClientFilterSet
from apps.clients.selectors import client_queryset
from apps.clients.services import client_update
from apps.core import search_indexes
from apps.drivers.filtersets import DriverFilterSet
from apps.drivers.selectors import driver_queryset
from apps.masterdata.models import Insurer
from apps.policies import filtersets as policy_filtersets
from apps.policies.filtersets import PolicyFilterSet
from apps.policies.selectors import policy_queryset
from apps.vehicles.filtersets import VehicleFilterSet
from apps.vehicles.selectors import vehicle_queryset
from tests.conftest import assert_problem, page_ids
from tests.factories import ClientFactory, DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db

VINS = ("1FUJGLDR7CLBP8834", "1FUJGLDR7CLBP8835", "1XKWD49X1AJ123456")


@pytest.fixture
def units(carrier):
    return [
        VehicleFactory(
            client=carrier,
            unit=f"Tr-{n}",
            serial_number=vin,
            owner=f"Owner Rio Bravo {n}",
            garaging_address=f"{n} Harbor Road, Laredo TX",
        )
        for n, vin in enumerate(VINS)
    ]


def test_a_unit_is_found_in_any_case_and_a_vin_by_its_start(api, units):
    assert page_ids(api.get("/v1/vehicles?unit=tr-1")) == [units[1].pk]
    assert page_ids(api.get("/v1/vehicles?unit=TR-1")) == [units[1].pk]
    assert page_ids(api.get("/v1/vehicles?vin=1fujgldr7")) == [units[0].pk, units[1].pk]
    assert page_ids(api.get("/v1/vehicles?vin=1XK")) == [units[2].pk]


def test_a_search_finds_nothing_of_another_agency_and_refuses_a_bad_vin(api, other_api, units):
    assert page_ids(other_api.get("/v1/vehicles?unit=tr-1")) == []
    assert page_ids(other_api.get("/v1/vehicles?vin=1FUJ")) == []
    assert page_ids(other_api.get("/v1/vehicles?owner=rio bravo")) == []
    assert_problem(api.get("/v1/vehicles?vin=1FUJGLDR7CLBP88345"), 400)  # 18 characters


def test_the_contains_searches_and_a_policy_number_ignore_case(api, agency, carrier, units):
    other = ClientFactory(agency=agency, client_name="Rio Grande Haulers", dot="7654321")
    policy = PolicyFactory(client=carrier, policy_number="AL-2026-77")
    assert page_ids(api.get("/v1/clients?name=grande")) == [other.pk]
    assert page_ids(api.get("/v1/vehicles?owner=rio BRAVO 2")) == [units[2].pk]
    assert page_ids(api.get("/v1/vehicles?garagingAddress=harbor road")) == [u.pk for u in units]
    assert page_ids(api.get("/v1/policies?policy=al-2026-77")) == [policy.pk]


def _copies(record, count: int, **fields):
    """`count` copies of `record` (new ids), each field given as a function of its number."""
    copies = []
    for n in range(count):
        made = copy.copy(record)
        made.pk = None
        for name, value in fields.items():
            setattr(made, name, value(n))
        copies.append(made)
    type(record).objects.bulk_create(copies)


def _plan(queryset, table: str) -> str:
    sql, params = queryset.order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {table}")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


POSTGRESQL = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL plans")


def _trigram_index(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [name])
        (definition,) = cursor.fetchone()
    return definition


@POSTGRESQL
@pytest.mark.parametrize(
    ("query", "index", "expression"),
    [
        ("name=lone star", "clients_name_trgm_idx", "upper((client_name)::text)"),
        ("owner=rio bravo", "vehicles_owner_trgm_idx", "upper((owner)::text)"),
        ("garagingAddress=harbor", "vehicles_garaging_trgm_idx", "upper((garaging_address)::text)"),
    ],
)
def test_each_contains_search_compares_what_its_trigram_index_holds(
    manager, units, query, index, expression
):
    # A GIN index is read through a bitmap, which PostgreSQL prefers to the agency's b-tree
    # only among many records (the bench's 302,100 units: 160 -> 3.6 ms); here the index is
    # shown to hold the trigrams of the very expression the search's SQL compares.
    assert f"USING gin ({expression} gin_trgm_ops)" in _trigram_index(index)
    filters, selector = (
        (ClientFilterSet, client_queryset)
        if query.startswith("name")
        else (VehicleFilterSet, vehicle_queryset)
    )
    found = filters(QueryDict(query), queryset=selector(user=manager)).qs
    sql, params = found.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert f"{expression} ~~ " in plan


@POSTGRESQL
@pytest.mark.parametrize(
    ("query", "index"),
    [("unit=tr-1", "vehicles_agency_unit_ci_idx"), ("vin=1FUJ", "vehicles_agency_vin_prefix_idx")],
)
def test_each_unit_search_is_answered_from_its_index(manager, units, query, index):
    # Among 3,000 other units of the agency, the plan reads the search's index: the SQL Django
    # writes for the lookup (`UPPER("unit"::text) =`, `"serial_number"::text LIKE`) is what
    # the index serves.
    _copies(
        units[0],
        3000,
        unit=lambda n: f"X-{n}",
        serial_number=lambda n: f"2HSC{n:013d}",
    )
    found = VehicleFilterSet(QueryDict(query), queryset=vehicle_queryset(user=manager)).qs
    assert f"using {index}" in _plan(found, "vehicles_vehicle")


@POSTGRESQL
def test_a_policy_number_is_answered_from_its_index(manager, carrier):
    policy = PolicyFactory(client=carrier, policy_number="AL-1")
    _copies(policy, 3000, policy_number=lambda n: f"GL-{n}")
    numbered = PolicyFilterSet(QueryDict("policy=al-1"), queryset=policy_queryset(user=manager))
    assert "using policies_agency_number_ci_idx" in _plan(numbered.qs, "policies_policy")


def test_without_pg_trgm_the_index_is_left_out(caplog):
    # A database whose owner may not create the extension: the migration goes on without the
    # index (the search reads the records), and says so.
    class Refusing:
        alias = "default"

        def cursor(self):
            return self

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def execute(self, sql, params=None):
            if sql.startswith("CREATE EXTENSION"):
                raise search_indexes.DatabaseError("permission denied to create extension")

        def fetchone(self):
            return None

    with mock.patch.object(search_indexes.transaction, "atomic"):
        assert search_indexes._trigrams_available(Refusing()) is False
    assert "pg_trgm cannot be created" in caplog.text


@POSTGRESQL
def test_an_index_that_cannot_be_made_is_left_out_and_the_migration_goes_on(caplog):
    # The index's CREATE runs in a savepoint: its failure (here a column that does not exist)
    # is logged, and the migration's transaction goes on.
    operation = search_indexes.trigram_index("probe_trgm_idx", "clients_client", "no_column")
    with connection.schema_editor() as editor:
        operation.code(None, editor)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM clients_client")
    assert "probe_trgm_idx not created" in caplog.text


@pytest.fixture
def drivers(carrier):
    return [
        DriverFactory(
            client=carrier,
            first_name="Maria",
            last_name="Gonzalez",
            email="maria@lonestar.example",
            license_number="TX0001",
        ),
        DriverFactory(client=carrier, first_name="Mario", last_name="Rossi", email=""),
        DriverFactory(client=carrier, first_name="James", last_name="Walker", email="jw@x.example"),
    ]


def test_a_drivers_search_matches_each_word_in_a_name_an_email_or_the_licence(
    api, other_api, drivers
):
    maria, mario, james = drivers

    def found(query):
        return sorted(page_ids(api.get(f"/v1/drivers?q={query}")))

    assert found("mari") == sorted([maria.pk, mario.pk])
    assert found("GONZ") == [maria.pk]
    assert found("lonestar.example") == [maria.pk]
    assert found("tx0001") == [maria.pk]  # the licence, whole, in any case
    assert found("tx000") == []  # ... and only whole
    assert found("mari rossi") == [mario.pk]  # every word, each anywhere
    assert found("mari walker") == []
    assert found("  ") == sorted(d.pk for d in drivers)
    assert page_ids(other_api.get("/v1/drivers?q=mari")) == []


def test_a_licence_is_found_as_it_is_stored_whatever_its_letters(api, carrier):
    # Stored normalized (Python's upper case: "ß" is "SS"), and the search's word normalized
    # the same way, so it is found as written, in any case, or as stored; PostgreSQL's
    # UPPER() keeps "ß", so an `iexact` comparison missed it there.
    driver = DriverFactory(client=carrier, first_name="Jorg", license_number="straße-9")
    assert driver.license_number == "STRASSE-9"
    for query in ("straße-9", "STRASSE-9", "Strasse-9"):
        assert page_ids(api.get(f"/v1/drivers?q={quote(query)}")) == [driver.pk], query


@pytest.mark.parametrize(
    "many", [500, 0], ids=["clients and insurers as lists", "clients and insurers through joins"]
)
def test_a_policies_search_matches_a_number_a_client_its_dot_or_an_insurer(
    api, other_api, manager, agency, other_agency, carrier, many, monkeypatch
):
    # Either way of looking for the clients and insurers so named (a list of their ids, or for
    # a word more than MANY_CLIENTS / MANY_INSURERS names hold, the join) finds the same
    # policies.
    monkeypatch.setattr(policy_filtersets, "MANY_CLIENTS", many)
    monkeypatch.setattr(policy_filtersets, "MANY_INSURERS", many)
    haulers = ClientFactory(agency=agency, client_name="Blue Sky Haulers", dot="7654321")
    rio = Insurer.objects.create(name="Rio Grande Mutual", name_key="rio grande mutual")
    by_number = PolicyFactory(client=carrier, policy_number="GWC-AL-77")
    by_client = PolicyFactory(client=haulers, policy_number="X-1")
    by_insurer = PolicyFactory(client=carrier, policy_number="X-2", insurer=rio)
    no_insurer = PolicyFactory(client=carrier, policy_number="X-3", insurer=None)
    # Another agency's client of the same name and DOT, and its policy with the same insurer.
    rival = ClientFactory(agency=other_agency, client_name="Blue Sky Haulers", dot="7654321")
    theirs = PolicyFactory(client=rival, policy_number="GWC-AL-77", insurer=rio)

    def found(query, caller=api):
        return sorted(page_ids(caller.get(f"/v1/policies?q={query}")))

    assert found("al-7") == [by_number.pk]
    assert found("blue SKY") == [by_client.pk]
    assert found("7654321") == [by_client.pk]  # the DOT, whole
    assert found("765432") == []
    assert found("grande mut") == [by_insurer.pk]
    assert found("x-") == sorted([by_client.pk, by_insurer.pk, no_insurer.pk])
    assert found("nothing at all") == []
    assert found("blue sky", other_api) == found("grande", other_api) == [theirs.pk]
    # A soft-deleted client's policies stay live (its units verify INACTIVE) and are still
    # found by its name or DOT, as the join to the client found them.
    client_update(user=manager, instance=haulers, deleted=True)
    assert found("blue SKY") == found("7654321") == [by_client.pk]


@POSTGRESQL
def test_a_policy_number_search_reads_its_trigram_index(manager, carrier):
    assert "USING gin (upper((policy_number)::text) gin_trgm_ops)" in _trigram_index(
        "policies_number_trgm_idx"
    )
    searched = PolicyFilterSet(QueryDict("q=al-7"), queryset=policy_queryset(user=manager))
    sql, params = searched.qs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "upper((policy_number)::text) ~~ '%AL-7%'" in plan


@POSTGRESQL
def test_a_drivers_search_compares_what_its_indexes_hold(manager, drivers):
    # As for the other contains-searches, PostgreSQL reads the GIN indexes (a BitmapOr of the
    # three and the licence's b-tree) only among many drivers (the bench's 49,600: 31-37 ->
    # 0.5-2.5 ms); here each index is shown to hold what the search's SQL compares, and the
    # licence to be compared as stored (normalized), which its b-tree serves.
    for column in ("first_name", "last_name", "email"):
        definition = _trigram_index(f"drivers_{column}_trgm_idx")
        assert f"USING gin (upper(({column})::text) gin_trgm_ops)" in definition
    searched = DriverFilterSet(QueryDict("q=gonzalez"), queryset=driver_queryset(user=manager))
    sql, params = searched.qs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    for column in ("first_name", "last_name", "email"):
        assert f"upper(({column})::text) ~~ '%GONZALEZ%'" in plan
    assert "(license_number)::text = 'GONZALEZ'" in plan


@POSTGRESQL
def test_a_trigram_index_is_made_with_its_expressions_statistics(carrier):
    # Made and the table analyzed at once: PostgreSQL estimates how many records a word
    # matches from the expression's statistics, which exist only after an ANALYZE.
    operation = search_indexes.trigram_index("probe_name_trgm_idx", "clients_client", "client_name")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the carrier's deferred checks, run
    with connection.schema_editor() as editor:
        operation.code(None, editor)
    with connection.cursor() as cursor:
        cursor.execute("SELECT attname FROM pg_stats WHERE tablename = 'probe_name_trgm_idx'")
        assert cursor.fetchall() == [("upper",)]


def test_a_policies_search_looks_among_the_callers_clients_only(
    manager, agency, other_agency, monkeypatch
):
    # Two clients of another agency hold the word, one of the caller's does: the caller's
    # search still sends its one client as a list (other agencies' clients neither count
    # towards MANY_CLIENTS nor enter the statement).
    monkeypatch.setattr(policy_filtersets, "MANY_CLIENTS", 1)
    for name in ("Rio Trucking A", "Rio Trucking B"):
        PolicyFactory(client=ClientFactory(agency=other_agency, client_name=name))
    mine = PolicyFactory(client=ClientFactory(agency=agency, client_name="Rio Trucking C"))
    searched = PolicyFilterSet(
        QueryDict("q=rio trucking"), queryset=policy_queryset(user=manager)
    ).qs
    assert list(searched) == [mine]
    assert "clients_client" not in str(searched.order_by().values("pk").query)


@POSTGRESQL
def test_an_analyze_that_fails_leaves_the_index_made(carrier, caplog):
    operation = search_indexes.trigram_index("probe_kept_trgm_idx", "clients_client", "dot")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with connection.schema_editor() as editor:
        run = editor.execute

        def execute(sql, params=()):
            if sql.startswith("ANALYZE"):
                raise search_indexes.DatabaseError("canceling statement due to lock timeout")
            return run(sql, params)

        with mock.patch.object(editor, "execute", execute):
            operation.code(None, editor)
    assert "USING gin" in _trigram_index("probe_kept_trgm_idx")
    assert "probe_kept_trgm_idx made; clients_client not analyzed" in caplog.text


@pytest.mark.parametrize("many", [500, 1])
def test_a_policies_search_joins_the_insurers_only_past_many_insurers(
    manager, carrier, many, monkeypatch
):
    # Two insurers hold the word: as a list of their ids while few do, through the join to
    # the insurer once more than MANY_INSURERS do (the same policies either way).
    monkeypatch.setattr(policy_filtersets, "MANY_INSURERS", many)
    found = []
    for name in ("Rio Grande Mutual", "Rio Bravo Casualty"):
        insurer = Insurer.objects.create(name=name, name_key=name.lower())
        found.append(PolicyFactory(client=carrier, insurer=insurer))
    PolicyFactory(client=carrier)
    searched = PolicyFilterSet(QueryDict("q=rio "), queryset=policy_queryset(user=manager)).qs
    assert sorted(p.pk for p in searched) == sorted(p.pk for p in found)
    joined = Insurer._meta.db_table in str(searched.order_by().values("pk").query)
    assert joined is (many == 1)
