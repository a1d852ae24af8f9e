"""The compliance verdict as verification shows it (contract section 15), embedded by the
verification endpoints of apps.coverages: outside `api`, since no app imports another app's
`api` package."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.compliance.evaluation import REASON_CODES, RESULTS, Reason, Verdict
from apps.core.serializers import ShapedSerializer, StrictCharField, StrictIntegerField


# Shapes a Reason of apps.compliance.evaluation (also the `reasons` of compliance.changed).
# Like verification's shapes, the keys are the ones the API sends (camelCase): verification
# answers are sent as they are built (apps.core.camel_case.CamelCased), and an event's data is
# camelized when written, which leaves these keys as they are.
class ReasonSerializer(ShapedSerializer):
    code = serializers.ChoiceField(choices=REASON_CODES)
    coverage_type = StrictCharField(allow_null=True)
    required = StrictCharField(allow_null=True)
    actual = StrictCharField(allow_null=True)
    message = StrictCharField()

    @staticmethod
    def shape(reason: Reason) -> dict:
        return {
            "code": reason.code,
            "coverageType": reason.coverage_type,
            "required": reason.required,
            "actual": reason.actual,
            "message": reason.message,
        }


class ComplianceSerializer(ShapedSerializer):
    # Shapes a Verdict of apps.compliance.evaluation.verdict.
    profile_id = StrictIntegerField()
    result = serializers.ChoiceField(choices=RESULTS)
    reasons = ReasonSerializer(many=True)

    @staticmethod
    def shape(verdict: Verdict | None) -> dict | None:
        if verdict is None:
            return None
        return {
            "profileId": verdict.profile_id,
            "result": verdict.result,
            "reasons": [ReasonSerializer.shape(r) for r in verdict.reasons],
        }


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
