"""Writes of vehicles: every business rule of a vehicle lives here."""

from __future__ import annotations

from decimal import Decimal
from typing import TypedDict, Unpack

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet

from apps.agencies.services import agency_record_create, agency_record_update
from apps.clients.models import Client
from apps.clients.selectors import visible_client
from apps.core.dates import today
from apps.core.services import (
    client_lock_first,
    fields_check,
    left_behind,
    links_clear,
    locked_for_update,
    model_update,
    rows_lock,
)
from apps.coverages.status import status_events_of_new, status_watch
from apps.events.records import record, records_updated_emit
from apps.events.services import client_event_emit, record_event_emit
from apps.masterdata.models import Make, State, UnitType
from apps.vehicles.models import Lienholder, Vehicle
from apps.vehicles.selectors import VEHICLE_RELATIONS


class VehicleFields(TypedDict, total=False):
    """The plain fields of a vehicle a caller may set (a fleet file's columns too)."""

    unit: str
    unit_type: UnitType
    model_year: int
    make: Make
    serial_number: str
    license_plate: str
    license_plate_state: State | None
    owner: str
    garaging_address: str
    stated_value: Decimal | None
    status: str


class VehicleChanges(VehicleFields, total=False):
    """A partial update: any plain field, the client and lienholder by id, soft deletion."""

    client_id: int
    lienholder_id: int | None
    deleted: bool


VEHICLE_FIELDS = tuple(VehicleFields.__annotations__)

# A model year is sold from the year before; two years ahead of today's is the furthest a unit
# can be, a later one a typo (the field's own range, 1900 to 2100, is the model's).
MODEL_YEARS_AHEAD = 2


def _model_year_check(vehicle: Vehicle) -> None:
    """The unit's model year is at most MODEL_YEARS_AHEAD years after this one: for every
    writer (the API, the admin's form, a fleet file), where the API's serializer alone held
    it and a fleet file stored a 2099 model."""
    if vehicle.model_year is not None and vehicle.model_year > today().year + MODEL_YEARS_AHEAD:
        raise ValidationError({"model_year": "Model year is too far in the future."})


def _lienholder(user, agency_id: int, lienholder_id: int | None) -> Lienholder | None:
    if lienholder_id is None:
        return None
    lienholder = (
        Lienholder.objects.for_user(user).filter(pk=lienholder_id, agency_id=agency_id).first()
    )
    if lienholder is None:
        raise ValidationError({"lienholder_id": "No lienholder with this id in the agency."})
    return lienholder


@transaction.atomic
def vehicle_create(
    *,
    user,
    client_id: int,
    lienholder_id: int | None = None,
    deleted: bool = False,
    **fields: Unpack[VehicleFields],
) -> Vehicle:
    """Add a vehicle to a client's fleet."""
    client = visible_client(user, client_id)
    vehicle = Vehicle(client=client, deleted=deleted, created_by=user, updated_by=user, **fields)
    vehicle.lienholder = _lienholder(user, client.agency_id, lienholder_id)
    vehicle.full_clean()  # the year's range first, as the API's field says it
    _model_year_check(vehicle)
    vehicle.save()
    client_event_emit(
        type="vehicle.created",
        client=client,
        data=record("vehicle", vehicle),
        along=status_events_of_new(vehicles=[vehicle]),  # verification finds it from now on
    )
    return vehicle


def vehicle_fields_check(**fields: Unpack[VehicleFields]) -> None:
    """The checks `vehicle_create` makes of each of these fields first, alone, writing
    nothing (`fields_check`)."""
    fields_check(Vehicle(**fields), fields)


@transaction.atomic
def vehicle_update(*, user, instance: Vehicle, **changes: Unpack[VehicleChanges]) -> Vehicle:
    """Partial update of a vehicle."""
    client_lock_first(Vehicle, instance.pk)  # so the client read below is the current one
    vehicle = locked_for_update(Vehicle.objects.select_related("client"), user, instance.pk)
    data: dict = {**changes}
    client = vehicle.client
    if changes.get("client_id", vehicle.client_id) != vehicle.client_id:
        if vehicle.coverages.exists():
            raise ValidationError(
                {"client_id": "A vehicle with coverage history cannot move to another client."}
            )
        if vehicle.driver_links.exists():  # its drivers are its client's (drivers' own rule)
            raise ValidationError(
                {"client_id": "A vehicle with drivers cannot move to another client."}
            )
        client = data["client"] = visible_client(user, changes["client_id"])
    moves = client.agency_id != vehicle.client.agency_id
    left = (vehicle.client.agency_id, vehicle.client_id)  # where it was
    # What the agency it leaves saw (a unit's deletion is its vehicle.updated, deleted).
    last_seen = record("vehicle", vehicle) if moves else None
    if left_behind(changes, "lienholder_id", vehicle.lienholder_id, moves=moves):
        data["lienholder"] = None  # the old agency's lienholder does not follow it
    elif "lienholder_id" in changes:
        data["lienholder"] = _lienholder(user, client.agency_id, changes["lienholder_id"])
    # A year the write changes is checked, never one stored before the rule (as model_update
    # checks a field's own rules).
    new_year = changes.get("model_year", vehicle.model_year) != vehicle.model_year
    with status_watch(vehicle_ids=[vehicle.pk]):
        _, changed = model_update(
            instance=vehicle,
            fields=(*VEHICLE_FIELDS, "client", "lienholder", "deleted"),
            data=data,
            user=user,
            check=_model_year_check if new_year else None,
        )
        if changed:  # an event means the unit's fields changed; then its status (status_watch)
            record_event_emit(
                type="vehicle.updated",
                gone_type="vehicle.updated",
                client=vehicle.client,
                data=record("vehicle", vehicle),
                was=left,
                last_seen=last_seen,
            )
    return vehicle


class LienholderFields(TypedDict, total=False):
    phone: str
    address: str


@transaction.atomic
def lienholder_create(
    *, user, agency_id: int, name: str, **fields: Unpack[LienholderFields]
) -> Lienholder:
    """A bank or lessor of an agency the user acts for."""
    return agency_record_create(
        user=user, model=Lienholder, agency_id=agency_id, name=name, **fields
    )


class LienholderChanges(LienholderFields, total=False):
    name: str
    agency_id: int  # its own agency only: its vehicles' clients are there


@transaction.atomic
def lienholder_update(
    *, user, instance: Lienholder, **changes: Unpack[LienholderChanges]
) -> Lienholder:
    """Partial update; a lienholder stays in its agency."""
    fields = ("name", *LienholderFields.__annotations__)
    return agency_record_update(user=user, instance=instance, fields=fields, changes=changes)


def vehicles_lienholder_clear(*, user, vehicles: QuerySet[Vehicle]) -> list[Vehicle]:
    """The units among `vehicles` that name a lienholder keep none (a lienholder deleted, or one
    a client's move to another agency leaves behind), each as `vehicle_update` would leave it:
    a history version and the stamps of `user` (`links_clear`), and a `vehicle.updated`, the
    unit as it is now, to the agency and client it is in. In bulk: the same statements for one
    unit or a fleet. For a write in progress, in its transaction, after it locked the units'
    clients (the order every write takes); the units cleared."""
    named = vehicles.exclude(lienholder=None)
    rows_lock(named)
    cleared = list(named.select_related(*VEHICLE_RELATIONS).order_by("pk"))
    if not cleared:
        return cleared
    links_clear(cleared, "lienholder", user=user)
    records_updated_emit(kind="vehicle", objs=cleared)
    return cleared


@transaction.atomic
def lienholder_delete(*, user, instance: Lienholder) -> None:
    """Delete a lienholder; its vehicles are released first (`vehicles_lienholder_clear`), each
    audited and announced as any other change of a vehicle, in the same statements however
    many they are."""
    lienholder = Lienholder.objects.for_user(user).get(pk=instance.pk)
    vehicles = Vehicle.objects.filter(lienholder=lienholder)
    rows_lock(Client.objects.filter(pk__in=vehicles.values("client_id")))  # clients first
    vehicles_lienholder_clear(user=user, vehicles=vehicles)
    lienholder.delete()
