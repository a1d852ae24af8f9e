"""A serializer's representation through a plan of its readable fields
(apps.core.serializers.PlannedRepresentation, issue 18) answers exactly what DRF's own
`Serializer.to_representation` answers, whatever the values: None on the way, a record that
does not exist, a callable, a Mapping, a related field by primary key, a method field."""

from __future__ import annotations

import datetime as dt
from unittest import mock

import pytest
from django.test import RequestFactory
from rest_framework import serializers

from apps.clients.api.serializers import ClientSerializer
from apps.compliance.api.serializers import RequirementProfileSerializer
from apps.compliance.models import RequirementProfile
from apps.core.serializers import PlannedRepresentation
from apps.drivers.api.serializers import DriverSerializer
from apps.policies.api.serializers import PolicySerializer
from apps.policies.selectors import policy_queryset
from apps.vehicles.api.serializers import (
    PolicyVehicleSerializer,
    VehicleDetailSerializer,
    VehicleSerializer,
)
from apps.vehicles.selectors import policy_vehicle_queryset, vehicle_detail_queryset
from tests.factories import (
    ClientFactory,
    DriverFactory,
    LienholderFactory,
    PolicyFactory,
    ProducerFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


def drf(serializer, instance) -> dict:
    """What the serializer answers with DRF's own Serializer.to_representation in place of the
    plan (its class's overrides, which call it, still run)."""
    with mock.patch.object(
        PlannedRepresentation, "to_representation", serializers.Serializer.to_representation
    ):
        return serializer.to_representation(instance)


def both(serializer_class, instance, user=None, **kwargs) -> tuple[dict, dict]:
    request = RequestFactory().get("/")
    if user is not None:
        request.user = user  # whose audit versions a vehicle shows (apps.core.history)
    planned = serializer_class(context={"request": request}, **kwargs)
    plain = serializer_class(context={"request": request}, **kwargs)
    return planned.to_representation(instance), drf(plain, instance)


class Owner:
    name = "Ann"

    def title(self):
        return "Dr"


class Thing:
    def __init__(self, owner=None, extra=None):
        self.owner, self.extra, self.number = owner, extra, 7

    def doubled(self):
        return self.number * 2


class ThingSerializer(PlannedRepresentation, serializers.Serializer):
    number = serializers.IntegerField()
    doubled = serializers.IntegerField()  # a method DRF calls
    owner_name = serializers.CharField(source="owner.name", default="nobody")
    owner_title = serializers.CharField(source="owner.title", allow_null=True)
    maybe = serializers.CharField(source="owner.missing", required=False)
    extra_key = serializers.CharField(source="extra.key", default=None, allow_null=True)
    itself = serializers.SerializerMethodField()

    def get_itself(self, thing) -> str:
        return type(thing).__name__


@pytest.mark.parametrize(
    "thing",
    [
        Thing(owner=Owner()),
        Thing(owner=None),  # None in the middle of owner.name: the default
        Thing(owner=Owner(), extra={"key": "from a mapping"}),
        Thing(owner=Owner(), extra={"other": 1}),  # a Mapping without the key: the default
    ],
)
def test_a_serializer_answers_as_drf_does(thing):
    planned, plain = both(ThingSerializer, thing)
    assert planned == plain
    assert planned["doubled"] == 14 and planned["itself"] == "Thing"
    assert "maybe" not in planned  # not required and absent: skipped, as DRF skips it


def test_a_required_value_that_is_missing_fails_as_in_drf():
    class Strict(PlannedRepresentation, serializers.Serializer):
        owner_name = serializers.CharField(source="owner.name")

    with pytest.raises(AttributeError):
        Strict().to_representation(Thing(owner=None))
    with pytest.raises(AttributeError):
        drf(Strict(), Thing(owner=None))


def test_the_resources_answer_as_drf_does(manager, carrier, agency):
    holder = LienholderFactory(agency=agency)
    policy = PolicyFactory(client=carrier, producer=ProducerFactory(agency=agency))
    bare = PolicyFactory(client=ClientFactory(agency=agency, dot="7777777"), insurer=None)
    plated = VehicleFactory(client=carrier, lienholder=holder, stated_value=None)
    unplated = VehicleFactory(client=carrier, license_plate_state=None, unit="B-2")
    VehicleCoverageFactory(vehicle=plated, policy=policy)
    driver = DriverFactory(client=carrier)
    profile = RequirementProfile.objects.create(
        agency=agency, name="Profile", created_at=dt.datetime.now(dt.UTC)
    )
    cases = [
        (ClientSerializer, carrier),
        (PolicySerializer, policy_queryset(user=manager).get(pk=policy.pk)),
        (PolicySerializer, policy_queryset(user=manager).get(pk=bare.pk)),
        (VehicleSerializer, plated),
        (VehicleSerializer, unplated),
        (VehicleDetailSerializer, vehicle_detail_queryset(user=manager).get(pk=plated.pk)),
        (PolicyVehicleSerializer, policy_vehicle_queryset(policy=policy).get(pk=plated.pk)),
        (DriverSerializer, driver),
        (RequirementProfileSerializer, profile),
    ]
    for serializer_class, instance in cases:
        planned, plain = both(serializer_class, instance, user=manager)
        assert planned == plain, serializer_class.__name__
    planned, _ = both(VehicleSerializer, unplated)
    assert planned["license_plate_state"] is None and planned["lienholder_name"] is None
    many = VehicleSerializer([plated, unplated], many=True).data
    assert [dict(row) for row in many] == [
        drf(VehicleSerializer(), plated),
        drf(VehicleSerializer(), unplated),
    ]


class Keyed(dict):
    """A Mapping whose attribute shadows a key: DRF reads the key."""

    number = "the attribute"


def test_a_mapping_is_read_by_key_as_drf_reads_it():
    class Numbered(PlannedRepresentation, serializers.Serializer):
        number = serializers.CharField()
        nested = serializers.CharField(source="inner.number")

    row = Keyed(number="the key", inner=Keyed(number="inner key"))
    planned, plain = both(Numbered, row)
    assert planned == plain == {"number": "the key", "nested": "inner key"}
    holder = Thing(extra=Keyed(number="key"))

    class Extra(PlannedRepresentation, serializers.Serializer):
        number = serializers.CharField(source="extra.number")

    assert both(Extra, holder) == ({"number": "key"}, {"number": "key"})


def test_plain_fields_do_not_go_through_drfs_get_attribute(manager, carrier):
    # The plan is what answers: only the fields that read their value otherwise (the audit
    # users, related by a slug) and the values the plain walk cannot take reach it.
    unit = VehicleFactory(client=carrier)
    calls = []
    original = serializers.Field.get_attribute

    def counted(field, instance):
        calls.append(field.field_name)
        return original(field, instance)

    with mock.patch.object(serializers.Field, "get_attribute", counted):
        VehicleSerializer().to_representation(unit)
    assert "unit" not in calls and "client_name" not in calls
    assert set(calls) <= {"created_by", "updated_by", "lienholder_name", "license_plate_state"}
