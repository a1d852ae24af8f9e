"""Uniqueness lives once: the model's UniqueConstraint and its violation_error_message, checked
by full_clean() in the service and answered 409 by the one problem handler, a race that only the
database catches included."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from apps.clients.services import client_create
from apps.core.models import unique_violations
from apps.core.problems import RACE_MESSAGE, ProblemExceptionHandler, race_message
from apps.drivers.models import DriverVehicle
from apps.vehicles.models import Vehicle
from tests.factories import ClientFactory, DriverFactory, UserFactory, VehicleFactory


def _handled(exc: Exception):
    return ProblemExceptionHandler(exc, {"view": None, "request": None}).run()


def test_full_clean_names_the_record_in_the_rules_message(db, agency):
    ClientFactory(agency=agency, dot="1234567")
    superuser = UserFactory(username="root", is_superuser=True)

    with pytest.raises(ValidationError) as caught:
        client_create(user=superuser, agency_id=agency.pk, client_name="Twin", dot="1234567")

    assert unique_violations(caught.value) == [
        "A live client with DOT 1234567 already exists in this agency."
    ]
    response = _handled(caught.value)
    assert response.status_code == 409
    assert (
        response.data["detail"] == "A live client with DOT 1234567 already exists in this agency."
    )


def test_a_deleted_record_does_not_take_its_number(db, agency):
    ClientFactory(agency=agency, dot="1234567", deleted=True)
    twin = ClientFactory.build(agency=agency, dot="1234567")

    twin.full_clean()  # the rule is conditional on live records: nothing to report


def test_a_race_the_database_catches_is_409_with_the_rules_message(db):
    unit = VehicleFactory()
    driver = DriverFactory(client=unit.client)
    DriverVehicle.objects.create(driver=driver, vehicle=unit)

    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        DriverVehicle.objects.create(driver=driver, vehicle=unit)  # no full_clean(): a race

    assert race_message(caught.value) == "The driver is already associated with this vehicle."
    response = _handled(caught.value)
    assert response.status_code == 409
    assert response.data["detail"] == "The driver is already associated with this vehicle."


def test_a_race_on_a_rule_whose_message_names_values_gets_the_general_message(db):
    unit = VehicleFactory()

    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        Vehicle.objects.create(
            client=unit.client,
            unit="Twin",
            unit_type=unit.unit_type,
            model_year=unit.model_year,
            make=unit.make,
            serial_number=unit.serial_number,
        )

    assert race_message(caught.value) == RACE_MESSAGE
    assert _handled(caught.value).status_code == 409
