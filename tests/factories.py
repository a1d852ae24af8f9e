"""Typed factories for the records tests arrange."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import factory
from django.contrib.auth import get_user_model

from apps.agencies.models import Agency, AgencyMembership, Producer
from apps.clients.models import Client
from apps.core.dates import today
from apps.coverages.models import VehicleCoverage
from apps.drivers.models import Driver
from apps.masterdata.models import CoverageType, DriverType, Insurer, Make, State, UnitType
from apps.policies.models import Policy
from apps.vehicles.models import Lienholder, Vehicle


class AgencyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Agency
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"Agency {n}")


class ProducerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Producer

    agency = factory.SubFactory(AgencyFactory)
    name = factory.Sequence(lambda n: f"Producer {n}")


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "secret-password")

    @factory.post_generation
    def agencies(self, create, extracted, **kwargs):
        for agency in extracted or []:
            AgencyMembership.objects.create(user=self, agency=agency)

    @factory.post_generation
    def groups(self, create, extracted, **kwargs):
        if extracted:
            self.groups.set(extracted)
        self.save()


class ClientFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Client

    agency = factory.SubFactory(AgencyFactory)
    client_name = factory.Sequence(lambda n: f"Carrier {n} LLC")
    dot = factory.Sequence(lambda n: str(1000000 + n))
    state = factory.LazyFunction(lambda: State.objects.get(code="TX"))


def _masterdata(model, name: str):
    return model.objects.get(name=name)


class PolicyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Policy

    client = factory.SubFactory(ClientFactory)
    policy_number = factory.Sequence(lambda n: f"POL-{n:05d}")
    coverage_type = factory.LazyFunction(lambda: CoverageType.objects.get(code="AL"))
    insurer = factory.LazyFunction(
        lambda: Insurer.objects.get_or_create(
            name="Great West Casualty Company",
            defaults={"name_key": "great west casualty company", "naic": "11371"},
        )[0]
    )
    effective_date = factory.LazyFunction(lambda: today() - dt.timedelta(days=100))
    expiration_date = factory.LazyAttribute(lambda o: o.effective_date + dt.timedelta(days=365))


class VehicleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Vehicle

    client = factory.SubFactory(ClientFactory)
    unit = factory.Sequence(lambda n: f"U{n}")
    unit_type = factory.LazyFunction(lambda: _masterdata(UnitType, "Tractor"))
    model_year = 2021
    make = factory.LazyFunction(lambda: _masterdata(Make, "Kenworth"))
    serial_number = factory.Sequence(lambda n: f"1XKYDP9X5MJ{n:06d}")
    license_plate = factory.Sequence(lambda n: f"PL{n:05d}")
    stated_value = Decimal("100000.00")


class DriverFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Driver

    client = factory.SubFactory(ClientFactory)
    first_name = factory.Sequence(lambda n: f"First{n}")
    last_name = factory.Sequence(lambda n: f"Last{n}")
    driver_type = factory.LazyFunction(lambda: _masterdata(DriverType, "Company Driver"))
    license_number = factory.Sequence(lambda n: f"DL{n:08d}")


class LienholderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Lienholder

    agency = factory.SubFactory(AgencyFactory)
    name = factory.Sequence(lambda n: f"Bank {n}")


class VehicleCoverageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = VehicleCoverage

    vehicle = factory.SubFactory(VehicleFactory)
    policy = factory.SubFactory(PolicyFactory)
    coverage_status = 4
    policy_added_date = factory.LazyAttribute(lambda o: o.policy.effective_date)
