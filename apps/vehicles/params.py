"""The vehicle query parameters other apps look vehicles up by (verification, certificates)."""

from __future__ import annotations

from apps.core.camel_case import camel
from apps.core.identifiers import parse_vin
from apps.core.params import QueryParam
from apps.masterdata.lookup import resolve
from apps.masterdata.models import State


class VinParam(QueryParam):
    """A VIN: 17 characters of the VIN alphabet, case ignored."""

    def to_internal_value(self, data) -> str:
        return parse_vin(data, field=camel(self.field_name))


PLATE_STATE = "The plate's state, by name or USPS code (optional)."


class PlateStateParam(QueryParam):
    """A plate's state by name or USPS code (an unknown one: 400)."""

    def to_internal_value(self, data) -> State:
        return resolve(State, data)


def plate_state_only_with_plate(data):
    """The query parameters with `licensePlateState` left out unless the lookup is by
    `licensePlate`: the state narrows a plate, and a lookup by VIN or id ignores it (not even
    parsed). A copy of the query only when it has the state."""
    if "licensePlateState" in data and data.get("licensePlate") in (None, ""):
        data = data.copy()
        data.pop("licensePlateState", None)
    return data
