"""drivers/0005 rewrites the licence numbers stored before the one rule (issue 14) in the
rule's form, so the `licenseNumber` filter finds drivers the admin or a fleet file wrote as
typed."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from apps.drivers.models import Driver
from tests.factories import DriverFactory

pytestmark = pytest.mark.django_db

migration = importlib.import_module("apps.drivers.migrations.0005_normalize_license_numbers")


def test_numbers_stored_as_typed_are_found_by_the_filter_after_the_migration(api, carrier):
    typed = DriverFactory(client=carrier)
    clean = DriverFactory(client=carrier)
    too_long = DriverFactory(client=carrier)
    # As the admin and the fleet import stored them before the rule: no save() rewrites them.
    Driver.objects.filter(pk=typed.pk).update(license_number=" tx77 ")
    Driver.objects.filter(pk=clean.pk).update(license_number="CA123")
    Driver.objects.filter(pk=too_long.pk).update(license_number="ß" * 40)
    assert api.get("/v1/drivers?licenseNumber=tx77").json()["count"] == 0

    migration.normalize(apps, None)

    found = api.get("/v1/drivers?licenseNumber=tx77").json()
    assert [row["id"] for row in found["results"]] == [typed.pk]
    assert found["results"][0]["licenseNumber"] == "TX77"
    numbers = dict(Driver.objects.values_list("pk", "license_number"))
    assert numbers[clean.pk] == "CA123"
    assert numbers[too_long.pk] == "ß" * 40  # SS x 40 would not fit the column
