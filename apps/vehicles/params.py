"""The vehicle query parameters other apps look vehicles up by (verification, certificates)."""

from __future__ import annotations

from rest_framework import serializers

from apps.core.identifiers import parse_vin
from apps.core.problems import camel


class VinParam(serializers.Field):
    """A VIN: 17 characters of the VIN alphabet, case ignored."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> str:
        return parse_vin(data, field=camel(self.field_name))

    def to_representation(self, value):
        return value
