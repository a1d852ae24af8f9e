"""The agency-wide searches of units read an index (issue 18): `unit=` ignoring case and
`vin=` as a prefix each read all of a 302,100-unit agency's units before (57-125 ms)."""

from __future__ import annotations

import copy

import pytest
from django.db import connection
from django.http import QueryDict

from apps.vehicles.filtersets import VehicleFilterSet
from apps.vehicles.models import Vehicle
from apps.vehicles.selectors import vehicle_queryset
from tests.conftest import page_ids
from tests.factories import VehicleFactory

pytestmark = pytest.mark.django_db

VINS = ("1FUJGLDR7CLBP8834", "1FUJGLDR7CLBP8835", "1XKWD49X1AJ123456")


@pytest.fixture
def units(carrier):
    return [
        VehicleFactory(client=carrier, unit=f"Tr-{n}", serial_number=vin)
        for n, vin in enumerate(VINS)
    ]


def test_a_unit_is_found_in_any_case_and_a_vin_by_its_start(api, units):
    assert page_ids(api.get("/v1/vehicles?unit=tr-1")) == [units[1].pk]
    assert page_ids(api.get("/v1/vehicles?unit=TR-1")) == [units[1].pk]
    assert page_ids(api.get("/v1/vehicles?vin=1fujgldr7")) == [units[0].pk, units[1].pk]
    assert page_ids(api.get("/v1/vehicles?vin=1XK")) == [units[2].pk]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL plans")
@pytest.mark.parametrize(
    ("query", "index"),
    [("unit=tr-1", "vehicles_agency_unit_ci_idx"), ("vin=1FUJ", "vehicles_agency_vin_prefix_idx")],
)
def test_each_search_can_be_answered_from_its_index(manager, units, query, index):
    # Among 3,000 other units of the agency, the plan reads the search's index: the SQL Django
    # writes for the lookup (`UPPER("unit"::text) =`, `"serial_number"::text LIKE`) is what the
    # index serves.
    base = units[0]
    others = []
    for n in range(3000):
        other = copy.copy(base)
        other.pk, other.unit, other.serial_number = None, f"X-{n}", f"2HSC{n:013d}"
        others.append(other)
    Vehicle.objects.bulk_create(others)
    found = VehicleFilterSet(QueryDict(query), queryset=vehicle_queryset(user=manager)).qs
    sql, params = found.order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE vehicles_vehicle")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert f"Index Scan using {index}" in plan or f"Index Only Scan using {index}" in plan, plan
