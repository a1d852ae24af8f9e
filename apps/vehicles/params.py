"""The vehicle query parameters other apps look vehicles up by (verification, certificates)."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from apps.core.problems import camel
from apps.vehicles.models import VIN_RE


class VinParam(serializers.Field):
    """A VIN: 17 characters of the VIN alphabet, case ignored."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> str:
        value = data.strip().upper()
        if not VIN_RE.match(value):
            raise ValidationError(
                {
                    camel(self.field_name): [
                        f"'{data}' is not a VIN (17 characters of A-H J-N P R-Z 0-9)."
                    ]
                }
            )
        return value

    def to_representation(self, value):
        return value
