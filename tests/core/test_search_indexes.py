"""The lists' searches read an index (issue 18): a unit ignoring case, a VIN's start, a policy
number ignoring case, and the contains-searches (a client's name, a unit's owner and garaging
address) through trigram indexes on PostgreSQL. Each read all of an agency's records before
(a 302,100-unit agency: 24-160 ms for a count and a page)."""

from __future__ import annotations

import copy
from unittest import mock

import pytest
from django.db import connection
from django.http import QueryDict

from apps.clients.filtersets import ClientFilterSet
from apps.clients.selectors import client_queryset
from apps.core import search_indexes
from apps.policies.filtersets import PolicyFilterSet
from apps.policies.selectors import policy_queryset
from apps.vehicles.filtersets import VehicleFilterSet
from apps.vehicles.selectors import vehicle_queryset
from tests.conftest import assert_problem, page_ids
from tests.factories import ClientFactory, PolicyFactory, VehicleFactory

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
