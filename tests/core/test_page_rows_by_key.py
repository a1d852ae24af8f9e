"""A list page's rows are read by primary key and the caller's agencies alone
(apps.core.pagination._rows_by_key, issue 18): the ids come from the list, and the agencies keep
out a record that left them between the two statements."""

from __future__ import annotations

import pytest
from django.db.models import Value

from apps.core.pagination import _rows_by_key, page_rows
from apps.vehicles.models import Vehicle
from tests.factories import ClientFactory, VehicleFactory

pytestmark = pytest.mark.django_db


def test_a_record_of_another_agency_is_not_read(agency, other_agency):
    mine = VehicleFactory(client=ClientFactory(agency=agency))
    theirs = VehicleFactory(client=ClientFactory(agency=other_agency))
    listed = Vehicle.objects.for_agencies([agency.pk]).order_by("unit", "id")
    rows = _rows_by_key(listed, [mine.pk, theirs.pk])
    assert [row.pk for row in rows] == [mine.pk]
    # page_rows keeps the page's order and drops what the rows' statement did not return
    assert [row.pk for row in page_rows(listed, 0, 25, 1)] == [mine.pk]


def test_the_rows_carry_the_lists_relations(agency, django_assert_num_queries):
    unit = VehicleFactory(client=ClientFactory(agency=agency))
    listed = Vehicle.objects.for_agencies([agency.pk]).select_related("client", "make")
    (row,) = _rows_by_key(listed.order_by("id"), [unit.pk])
    with django_assert_num_queries(0):
        assert (row.client.pk, row.make.pk) == (unit.client_id, unit.make_id)


@pytest.mark.parametrize(
    "shape",
    [
        lambda qs: qs.all(),  # for_agencies(None): every agency, a superuser's
        lambda qs: qs.for_agencies([1]).annotate(n=Value(1)),
        lambda qs: qs.for_agencies([1]).only("id", "unit"),
        lambda qs: qs.for_agencies([1]).distinct(),
        lambda qs: qs.for_agencies([1]).extra(select={"x": "1"}),
    ],
)
def test_what_cannot_be_rebuilt_keeps_its_own_statement(shape):
    assert _rows_by_key(shape(Vehicle.objects), [1]) is None


def test_the_rows_statement_is_compiled_once_and_answers_each_call(agency, compiled):
    # The rows' statement is compiled once per process for a model and its relations; each
    # later page puts only its ids and agencies into it, and its prefetches still run.
    units = [VehicleFactory(client=ClientFactory(agency=agency), unit=f"U-{n}") for n in range(4)]
    listed = (
        Vehicle.objects.for_agencies([agency.pk])
        .select_related("client", "make")
        .prefetch_related("driver_links")
        .order_by("unit", "id")
    )
    for _ in range(2):  # a shape seen once is compiled as before, the second time prepared
        _rows_by_key(listed, [units[0].pk, units[1].pk])
    compiled.clear()
    rows = _rows_by_key(listed, [units[3].pk, units[2].pk])
    assert sorted(row.pk for row in rows) == sorted([units[2].pk, units[3].pk])
    assert [row.client.pk for row in rows] == [row.client_id for row in rows]
    assert all("driver_links" in row._prefetched_objects_cache for row in rows)
    assert Vehicle not in compiled  # the prefetch compiles its own (DriverVehicle) statement
    # another agency's caller asks the same prepared statement (same relations, two ids) with
    # its own agencies, and gets none of these
    theirs = Vehicle.objects.for_agencies([agency.pk + 1000]).select_related("client", "make")
    assert _rows_by_key(theirs.order_by("id"), [units[0].pk, units[1].pk]) == []
    assert Vehicle not in compiled
