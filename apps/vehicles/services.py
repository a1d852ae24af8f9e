"""Writes of vehicles: every business rule of a vehicle lives here."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from apps.core.exceptions import Conflict
from apps.events.records import vehicle_record
from apps.events.services import event_emit, status_watch
from apps.policies.services import visible_client
from apps.vehicles.models import Lienholder, Vehicle

VEHICLE_FIELDS = (
    "unit",
    "unit_type",
    "model_year",
    "make",
    "serial_number",
    "license_plate",
    "license_plate_state",
    "owner",
    "garaging_address",
    "stated_value",
    "status",
    "deleted",
)


def _lienholder(user, vehicle: Vehicle, lienholder_id: int | None) -> Lienholder | None:
    if lienholder_id is None:
        return None
    lienholder = (
        Lienholder.objects.for_user(user)
        .filter(pk=lienholder_id, agency_id=vehicle.client.agency_id)
        .first()
    )
    if lienholder is None:
        raise ValidationError({"lienholder_id": "No lienholder with this id in the agency."})
    return lienholder


def _check_vin_free(vehicle: Vehicle) -> None:
    taken = (
        Vehicle.objects.filter(client_id=vehicle.client_id, serial_number=vehicle.serial_number)
        .exclude(pk=vehicle.pk)
        .exists()
    )
    if taken:
        raise Conflict(f"This client already has a vehicle with VIN {vehicle.serial_number}.")


@transaction.atomic
def vehicle_create(*, user, data: dict[str, Any]) -> Vehicle:
    """Add a vehicle to a client's fleet."""
    client = visible_client(user, data["client_id"])
    vehicle = Vehicle(client=client, created_by=user, updated_by=user)
    for field in VEHICLE_FIELDS:
        if field in data:
            setattr(vehicle, field, data[field])
    vehicle.lienholder = _lienholder(user, vehicle, data.get("lienholder_id"))
    _check_vin_free(vehicle)
    vehicle.full_clean(validate_constraints=False)
    vehicle.save()
    event_emit(
        type="vehicle.created",
        agency_id=client.agency_id,
        client_id=client.pk,
        data=vehicle_record(vehicle),
    )
    return vehicle


@transaction.atomic
def vehicle_update(*, user, instance: Vehicle, data: dict[str, Any]) -> Vehicle:
    """Partial update of a vehicle."""
    vehicle = Vehicle.objects.select_for_update().select_related("client").get(pk=instance.pk)
    if "client_id" in data and data["client_id"] != vehicle.client_id:
        if vehicle.coverages.exists():
            raise ValidationError(
                {"client_id": "A vehicle with coverage history cannot move to another client."}
            )
        vehicle.client = visible_client(user, data["client_id"])
    for field in VEHICLE_FIELDS:
        if field in data:
            setattr(vehicle, field, data[field])
    if "lienholder_id" in data:
        vehicle.lienholder = _lienholder(user, vehicle, data["lienholder_id"])
    elif vehicle.lienholder_id and vehicle.lienholder.agency_id != vehicle.client.agency_id:
        vehicle.lienholder = None
    _check_vin_free(vehicle)
    vehicle.updated_by = user
    vehicle.full_clean(validate_constraints=False)
    with status_watch(vehicle_ids=[vehicle.pk]):
        vehicle.save()
    event_emit(
        type="vehicle.updated",
        agency_id=vehicle.client.agency_id,
        client_id=vehicle.client_id,
        data=vehicle_record(vehicle),
    )
    return vehicle
