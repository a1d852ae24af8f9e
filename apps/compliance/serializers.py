"""The compliance verdict as verification shows it (contract section 15), embedded by the
verification endpoints of apps.coverages: outside `api`, since no app imports another app's
`api` package."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.compliance.evaluation import REASON_CODES
from apps.core.serializers import StrictCharField, StrictIntegerField


class ReasonSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=REASON_CODES)
    coverage_type = StrictCharField(allow_null=True)
    required = StrictCharField(allow_null=True)
    actual = StrictCharField(allow_null=True)
    message = StrictCharField()


class ComplianceSerializer(serializers.Serializer):
    profile_id = StrictIntegerField()
    result = serializers.ChoiceField(choices=["PASS", "CAUTION", "FAIL"])
    reasons = ReasonSerializer(many=True)


def compliance_field() -> ComplianceSerializer:
    return ComplianceSerializer(
        required=False,
        allow_null=True,
        help_text="Present when a profile was named; null for what was not found.",
    )


@extend_schema_field(OpenApiTypes.STR)
class ProfileRefField(serializers.Field):
    """A profile id (number or digits) or code, as the batch body names it."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, str | int):
            raise serializers.ValidationError("Expected a profile id or code.")
        value = str(data).strip()
        if not value:
            raise serializers.ValidationError("Expected a profile id or code.")
        return value

    def to_representation(self, value):
        return value
