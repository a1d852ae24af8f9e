"""Typed factories for the records tests arrange."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from apps.agencies.models import Agency, AgencyMembership, Producer
from apps.clients.models import Client
from apps.masterdata.models import State


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
