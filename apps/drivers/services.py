"""Writes of drivers and of driver-vehicle associations."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from apps.core.exceptions import Conflict
from apps.drivers.models import Driver, DriverVehicle
from apps.masterdata.models import DriverType
from apps.policies.services import visible_client
from apps.vehicles.models import Vehicle

DRIVER_FIELDS = (
    "first_name",
    "last_name",
    "driver_type",
    "date_of_birth",
    "hire_date",
    "license_number",
    "license_state",
    "license_expiration_date",
    "dl_type",
    "address",
    "state",
    "city",
    "zip_code",
    "phone",
    "email",
    "status",
)
DEFAULT_DRIVER_TYPE = "Company Driver"


def _check_dates(driver: Driver) -> None:
    if driver.date_of_birth and driver.hire_date and driver.hire_date < driver.date_of_birth:
        raise ValidationError({"hire_date": "Cannot precede the date of birth."})


@transaction.atomic
def driver_create(*, user, data: dict[str, Any]) -> Driver:
    """Add a driver to a client."""
    client = visible_client(user, data["client_id"])
    driver = Driver(client=client, created_by=user, updated_by=user)
    for field in DRIVER_FIELDS:
        if field in data:
            setattr(driver, field, data[field])
    _check_dates(driver)
    driver.full_clean(validate_constraints=False)
    driver.save()
    return driver


@transaction.atomic
def driver_update(*, user, instance: Driver, data: dict[str, Any]) -> Driver:
    """Partial update of a driver."""
    driver = Driver.objects.select_for_update().get(pk=instance.pk)
    if "client_id" in data and data["client_id"] != driver.client_id:
        if driver.coverages.exists() or driver.vehicle_links.exists():
            raise ValidationError(
                {"client_id": "A driver with vehicles or coverage cannot move to another client."}
            )
        driver.client = visible_client(user, data["client_id"])
    for field in DRIVER_FIELDS:
        if field in data:
            setattr(driver, field, data[field])
    _check_dates(driver)
    driver.updated_by = user
    driver.full_clean(validate_constraints=False)
    driver.save()
    return driver


@transaction.atomic
def driver_vehicle_link(*, user, data: dict[str, Any]) -> DriverVehicle:
    """Associate a driver with a vehicle of the same client.

    `driverId` > 0 names an existing driver; 0 creates the driver from the body first.
    """
    vehicle = (
        Vehicle.objects.for_user(user)
        .select_related("client")
        .filter(pk=data["vehicle_id"])
        .first()
    )
    if vehicle is None:
        raise ValidationError({"vehicle_id": "No vehicle with this id."})
    if data["driver_id"] == 0:
        if not user.has_perm("drivers.add_driver"):
            raise PermissionDenied("Creating a driver needs the add_driver permission.")
        missing = {
            f: "Required when driverId is 0."
            for f in ("first_name", "last_name")
            if not data.get(f)
        }
        if missing:
            raise ValidationError(missing)
        driver_data = {k: v for k, v in data.items() if k in DRIVER_FIELDS}
        driver_data.setdefault("driver_type", DriverType.objects.by_name(DEFAULT_DRIVER_TYPE).get())
        driver = driver_create(user=user, data={**driver_data, "client_id": vehicle.client_id})
    else:
        driver = Driver.objects.for_user(user).filter(pk=data["driver_id"]).first()
        if driver is None:
            raise ValidationError({"driver_id": "No driver with this id."})
        if driver.client_id != vehicle.client_id:
            raise ValidationError({"driver_id": "The driver belongs to another client."})
    if DriverVehicle.objects.filter(driver=driver, vehicle=vehicle).exists():
        raise Conflict("The driver is already associated with this vehicle.")
    return DriverVehicle.objects.create(driver=driver, vehicle=vehicle, created_by=user)
