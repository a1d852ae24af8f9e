"""Writes of master data: the bulk load of the reference lists, and the rows staff add,
change or remove one at a time (the back-office and the demo seed)."""

from __future__ import annotations

from typing import TypedDict, TypeVar, Unpack

import us
import zipcodes
from django.core.exceptions import ValidationError
from django.db import transaction

from apps.core.services import delete_unused, model_update
from apps.masterdata import data
from apps.masterdata.models import (
    City,
    ClientType,
    CoverageType,
    DriverType,
    LicenseType,
    Make,
    NamedModel,
    State,
    UnitType,
)
from apps.masterdata.models import name_key as _key

Row = TypeVar("Row", bound=NamedModel)


class NamedFields(TypedDict, total=False):
    """What every reference row has; makes, driver, licence and client types have only this."""

    name: str


class StateFields(NamedFields, total=False):
    code: str
    is_territory: bool


class CityFields(NamedFields, total=False):
    state: State


class UnitTypeFields(NamedFields, total=False):
    is_power_unit: bool


class CoverageTypeFields(NamedFields, total=False):
    code: str
    schedules_units: bool
    schedules_drivers: bool


class InsurerFields(NamedFields, total=False):
    naic: str
    address: str
    am_best_rating: str


class MasterDataFields(
    StateFields, CityFields, UnitTypeFields, CoverageTypeFields, InsurerFields, total=False
):
    """The fields of any reference list: one service writes them all, and `_writable` refuses
    a field the row's own list does not have (a make's `state` is a TypeError)."""


@transaction.atomic
def masterdata_load() -> dict[str, int]:
    """Insert what is missing; never changes or removes rows staff edited. Returns counts."""
    states = [*us.states.STATES_AND_TERRITORIES, us.states.DC]
    State.objects.bulk_create(
        [
            State(name=s.name, name_key=_key(s.name), code=s.abbr, is_territory=s.is_territory)
            for s in states
        ],
        ignore_conflicts=True,
    )
    state_ids = dict(State.objects.values_list("code", "id"))
    city_rows = {
        (z["state"], _key(z["city"])): z["city"].strip()
        for z in zipcodes.list_all()
        if z["state"] in state_ids and z["city"]
    }
    City.objects.bulk_create(
        [
            City(state_id=state_ids[code], name=name, name_key=key)
            for (code, key), name in city_rows.items()
        ],
        ignore_conflicts=True,
        batch_size=2000,
    )
    UnitType.objects.bulk_create(
        [UnitType(name=n, name_key=_key(n), is_power_unit=p) for n, p in data.UNIT_TYPES],
        ignore_conflicts=True,
    )
    Make.objects.bulk_create(
        [Make(name=n, name_key=_key(n)) for n in data.MAKES], ignore_conflicts=True
    )
    CoverageType.objects.bulk_create(
        [
            CoverageType(
                code=code, name=name, name_key=_key(name), schedules_units=u, schedules_drivers=d
            )
            for code, name, u, d in data.COVERAGE_TYPES
        ],
        ignore_conflicts=True,
    )
    for model, names in (
        (DriverType, data.DRIVER_TYPES),
        (LicenseType, data.LICENSE_TYPES),
        (ClientType, data.CLIENT_TYPES),
    ):
        model.objects.bulk_create(
            [model(name=n, name_key=_key(n)) for n in names], ignore_conflicts=True
        )
    return {
        model._meta.verbose_name_plural: model.objects.count()
        for model in (
            State,
            City,
            UnitType,
            Make,
            CoverageType,
            DriverType,
            LicenseType,
            ClientType,
        )
    }


def _writable(model: type[NamedModel], names) -> tuple[str, ...]:
    """The fields a row's writers may set (its own columns, not the id or the derived key);
    naming any other is a programming error."""
    fields = tuple(f.name for f in model._meta.concrete_fields if f.editable and not f.primary_key)
    unknown = set(names) - set(fields)
    if unknown:
        raise TypeError(f"{model.__name__} has no writable field {sorted(unknown)}.")
    return fields


@transaction.atomic
def masterdata_create(*, user, model: type[Row], **fields: Unpack[MasterDataFields]) -> Row:
    """A new reference row (a make, a city, an insurer…): its name is unique in its list (in
    its state for a city), checked by `full_clean()` like every uniqueness rule (409)."""
    _writable(model, fields)
    row = model(**fields)
    row.full_clean()
    row.save()
    return row


@transaction.atomic
def masterdata_update(*, user, instance: Row, **changes: Unpack[MasterDataFields]) -> Row:
    """Partial update of a reference row; its lookup key follows its name."""
    fields = _writable(type(instance), changes)
    row = type(instance).objects.select_for_update().get(pk=instance.pk)
    # A state's USPS code is fixed (the admin shows states read-only) and drivers keep a copy
    # of it (Driver.license_state_code, their sort column): a new code is refused, not spread.
    if isinstance(row, State) and changes.get("code", row.code) != row.code:
        raise ValidationError({"code": "A state's USPS code cannot be changed."})
    model_update(instance=row, fields=fields, data=changes)
    return row


@transaction.atomic
def masterdata_delete(*, user, instance: NamedModel) -> None:
    """Remove a reference row that no record names; one in use stays (409)."""
    noun = instance._meta.verbose_name
    delete_unused(
        type(instance).objects.get(pk=instance.pk),
        f"The {noun} '{instance}' is in use and cannot be deleted.",
    )
