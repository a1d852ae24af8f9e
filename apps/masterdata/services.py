"""Loading master data: idempotent, bulk, safe to run on every start."""

from __future__ import annotations

import us
import zipcodes
from django.db import transaction

from apps.masterdata import data
from apps.masterdata.models import (
    City,
    ClientType,
    CoverageType,
    DriverType,
    LicenseType,
    Make,
    State,
    UnitType,
)


def _key(name: str) -> str:
    return name.strip().lower()


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
