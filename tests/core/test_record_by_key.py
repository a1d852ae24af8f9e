"""One record shown whole is read by its primary key through a statement prepared on the server
and planned with its joins in written order, its prefetches afterwards
(apps.core.prepared.record_by_key, issue 18); a queryset with a subquery, an aggregate, a window
or raw SQL is read as it is."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Count, Exists, FilteredRelation, OuterRef, Q, Subquery, Window
from django.db.models.expressions import RawSQL
from django.db.models.functions import RowNumber
from django.http import Http404
from django.test.utils import CaptureQueriesContext
from rest_framework.generics import get_object_or_404

from apps.core.prepared import _is_flat, record_by_key
from apps.policies.models import Policy
from apps.policies.selectors import policy_queryset
from apps.vehicles.models import Vehicle
from apps.vehicles.selectors import vehicle_detail_queryset
from tests.factories import ClientFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db


def test_the_detail_querysets_are_flat(manager):
    # joins to what a record points to, the agency filter, the policy's status as CASE WHEN
    assert _is_flat(vehicle_detail_queryset(user=manager).query)
    assert _is_flat(policy_queryset(user=manager).query)


@pytest.mark.parametrize(
    "shape",
    [
        lambda qs: qs.filter(Exists(Policy.objects.filter(client=OuterRef("client")))),
        lambda qs: qs.filter(client_id__in=Policy.objects.values("client_id")),
        lambda qs: qs.filter(~Q(client_id__in=Policy.objects.values("client_id"))),
        lambda qs: qs.annotate(n=Count("coverages")),
        lambda qs: qs.annotate(n=Window(RowNumber(), order_by="id")),
        lambda qs: qs.annotate(n=RawSQL("SELECT 1", [])),
        lambda qs: qs.extra(where=["1 = 1"]),
        lambda qs: qs.extra(select={"x": "1"}),
        lambda qs: qs.distinct(),
        lambda qs: qs.order_by(RawSQL("1", [])),
        lambda qs: qs.union(Vehicle.objects.all()),
        lambda qs: qs.extra(order_by=["unit"]),
        lambda qs: qs.extra(tables=["clients_client"]),
        lambda qs: qs.filter(pk__in=[Subquery(Vehicle.objects.values("pk")[:1])]),
        lambda qs: qs.annotate(
            held=FilteredRelation(
                "coverages", condition=Q(Exists(Policy.objects.filter(pk=OuterRef("pk"))))
            )
        ).filter(held__isnull=False),
    ],
)
def test_what_has_more_than_joins_is_not_flat(shape):
    assert not _is_flat(shape(Vehicle.objects.all()).query)


def test_the_record_comes_with_its_relations_and_prefetches(
    manager, carrier, django_assert_num_queries
):
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    VehicleCoverageFactory(vehicle=unit, policy=policy)
    details = vehicle_detail_queryset(user=manager)
    with CaptureQueriesContext(connection) as plain:
        details.get(pk=unit.pk)
    with django_assert_num_queries(len(plain)):  # the record, then its prefetches
        record = record_by_key(details, lambda records: records.get(pk=unit.pk))
    with django_assert_num_queries(0):
        assert record.client.pk == carrier.pk and record.make.pk == unit.make_id
        assert [c.policy.pk for c in record.coverages.all()] == [policy.pk]
        assert list(record.driver_links.all()) == []


def test_a_record_of_another_agency_or_none_is_not_found(manager, other_agency):
    theirs = VehicleFactory(client=ClientFactory(agency=other_agency))
    details = vehicle_detail_queryset(user=manager)
    with pytest.raises(Http404):
        record_by_key(details, lambda records: get_object_or_404(records, pk=theirs.pk))
    assert record_by_key(details, lambda records: records.filter(pk=theirs.pk).first()) is None


def test_a_queryset_that_is_not_flat_is_read_as_it_is(manager, carrier):
    unit = VehicleFactory(client=carrier)
    counted = vehicle_detail_queryset(user=manager).annotate(periods=Count("coverages"))
    record = record_by_key(counted, lambda records: records.get(pk=unit.pk))
    assert record.pk == unit.pk and record.periods == 0
