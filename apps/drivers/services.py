"""Writes of drivers and of driver-vehicle associations."""

from __future__ import annotations

import datetime as dt
from typing import TypedDict, Unpack

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from apps.clients.selectors import visible_client
from apps.core.dates import today
from apps.core.services import (
    client_lock_first,
    fields_check,
    live_reference,
    locked_for_update,
    model_update,
)
from apps.drivers.models import Driver, DriverVehicle, normalize_license_number
from apps.masterdata.models import City, DriverType, LicenseType, State, address_check
from apps.vehicles.models import Vehicle


class DriverFields(TypedDict, total=False):
    """The plain fields of a driver a caller may set (a fleet file's columns too)."""

    first_name: str
    last_name: str
    driver_type: DriverType
    date_of_birth: dt.date | None
    hire_date: dt.date | None
    license_number: str
    license_state: State | None
    license_expiration_date: dt.date | None
    dl_type: LicenseType | None
    address: str
    state: State | None
    city: City | None
    zip_code: str
    phone: str
    email: str
    status: str


class DriverChanges(DriverFields, total=False):
    """A partial update: any plain field, and the client by id."""

    client_id: int


DRIVER_FIELDS = tuple(DriverFields.__annotations__)
DEFAULT_DRIVER_TYPE = "Company Driver"


def _normalized(fields: dict) -> dict:
    """The fields in the form `Driver.save` stores, before they are compared and validated: a
    number given again in lower case is no change, and its length is the stored one's."""
    data = {**fields}
    if isinstance(data.get("license_number"), str):
        data["license_number"] = normalize_license_number(data["license_number"])
    return data


def _check_dates(driver: Driver, *, stored_birth=None) -> None:
    """A driver is born by today (the service's) and hired after birth. A date of birth stored
    before that first rule (`stored_birth`, kept by the update) is not judged again: an update
    of another field must not fail on a field its caller never sent."""
    born = driver.date_of_birth
    if born and born != stored_birth and born > today():
        raise ValidationError({"date_of_birth": "Cannot be after today."})
    if driver.date_of_birth and driver.hire_date and driver.hire_date < driver.date_of_birth:
        raise ValidationError({"hire_date": "Cannot precede the date of birth."})


@transaction.atomic
def driver_create(*, user, client_id: int, **fields: Unpack[DriverFields]) -> Driver:
    """Add a driver to a client."""
    client = visible_client(user, client_id)
    driver = Driver(client=client, created_by=user, updated_by=user, **_normalized(fields))
    _check_dates(driver)
    address_check(driver, fields)
    driver.full_clean()
    driver.save()
    return driver


def driver_fields_check(**fields: Unpack[DriverFields]) -> None:
    """The checks `driver_create` makes of each of these fields first (normalised as it
    stores them), alone, writing nothing (`fields_check`)."""
    fields_check(Driver(**_normalized(fields)), fields)


@transaction.atomic
def driver_update(*, user, instance: Driver, **changes: Unpack[DriverChanges]) -> Driver:
    """Partial update of a driver."""
    driver = locked_for_update(Driver.objects, user, instance.pk)
    data: dict = _normalized(changes)
    if changes.get("client_id", driver.client_id) != driver.client_id:
        if driver.coverages.exists() or driver.vehicle_links.exists():
            raise ValidationError(
                {"client_id": "A driver with vehicles or coverage cannot move to another client."}
            )
        data["client"] = visible_client(user, changes["client_id"])
    address_check(driver, data)
    stored_birth = driver.date_of_birth
    model_update(
        instance=driver,
        fields=(*DRIVER_FIELDS, "client"),
        data=data,
        user=user,
        check=lambda changed: _check_dates(changed, stored_birth=stored_birth),
    )
    return driver


@transaction.atomic
def driver_vehicle_link(
    *,
    user,
    vehicle_id: int,
    driver_id: int,
    client_id: int | None = None,
    **new_driver: Unpack[DriverFields],
) -> DriverVehicle:
    """Associate a driver with a vehicle of the same client.

    `driver_id` > 0 names an existing driver; 0 creates the driver from `new_driver` first.
    `client_id`, if given, must be the vehicle's client: one the caller cannot see is a 400 as
    for any client a write names, another visible one a 400 too (never a driver put under a
    client the caller did not name).
    """
    # The vehicle and the driver locked, so that a move of either (refused while it has links)
    # waits for this link; their client first (a driver created here names it), as every write
    # takes them. Both live, of a live client, as a scheduling finds them.
    client_lock_first(Vehicle, vehicle_id)
    vehicle = live_reference(Vehicle.objects, user, vehicle_id, field="vehicle_id")
    if client_id is not None and client_id != vehicle.client_id:
        visible_client(user, client_id, lock=False)
        raise ValidationError({"client_id": "Must be the vehicle's client."})
    if driver_id == 0:
        if not user.has_perm("drivers.add_driver"):
            raise PermissionDenied("Creating a driver needs the add_driver permission.")
        missing = {
            f: "Required when driverId is 0."
            for f in ("first_name", "last_name")
            if not new_driver.get(f)
        }
        if missing:
            raise ValidationError(missing)
        new_driver.setdefault("driver_type", DriverType.objects.by_name(DEFAULT_DRIVER_TYPE).get())
        driver = driver_create(user=user, client_id=vehicle.client_id, **new_driver)
    else:
        driver = live_reference(Driver.objects, user, driver_id, field="driver_id")
        if driver.client_id != vehicle.client_id:
            raise ValidationError({"driver_id": "The driver belongs to another client."})
    link = DriverVehicle(driver=driver, vehicle=vehicle, created_by=user)
    link.full_clean()  # the unique pair: 409 through the problem handler
    link.save()
    return link
