"""The vehicle query parameters other apps look vehicles up by (verification, certificates)."""

from __future__ import annotations

from apps.core.camel_case import camel
from apps.core.identifiers import parse_vin
from apps.core.params import QueryParam


class VinParam(QueryParam):
    """A VIN: 17 characters of the VIN alphabet, case ignored."""

    def to_internal_value(self, data) -> str:
        return parse_vin(data, field=camel(self.field_name))
