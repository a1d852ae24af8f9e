from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.compliance.models import RequirementProfile, code_validator
from apps.compliance.rules import KINDS, rules_clean
from apps.core.serializers import (
    AUDIT_FIELDS,
    AuditedModelSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    reference_id_field,
)
from apps.masterdata.models import AmBestRating


class RuleSerializer(serializers.Serializer):
    """One rule; which properties apply depends on `kind` (contract section 15)."""

    kind = serializers.ChoiceField(choices=KINDS)
    coverage_type = StrictCharField(required=False, help_text="coverage: the line required.")
    minimum_limit = StrictCharField(
        required=False, allow_null=True, help_text="coverage: the least amount, e.g. 1000000.00."
    )
    limit_name = StrictCharField(
        required=False,
        allow_null=True,
        help_text="coverage: the limit compared (default: the policy's highest limit).",
    )
    minimum = serializers.ChoiceField(
        choices=AmBestRating.values, required=False, help_text="insurer_rating: e.g. A-."
    )
    days = StrictIntegerField(required=False, help_text="expiration_notice: 1 to 365.")


@extend_schema_field(RuleSerializer(many=True))
class RulesField(serializers.Field):
    """The rules, validated and normalized by the same function the admin uses."""

    def to_internal_value(self, data):
        try:
            return rules_clean(data)
        except DjangoValidationError as exc:
            # Keys are "rules" or "rules.<index>.<property>": nest them under this field.
            ((key, messages),) = exc.message_dict.items()
            if key == "rules":
                raise serializers.ValidationError(list(messages)) from None
            nested = {key.removeprefix("rules."): list(messages)}
            raise serializers.ValidationError(nested) from None

    def to_representation(self, value):
        return value


class RequirementProfileSerializer(AuditedModelSerializer):
    """A requirement profile as read and written."""

    name = StrictCharField(max_length=200)
    # Empty or absent: made from the name on create, unchanged on update (as the admin's
    # blank field; requirement_profile_create / _update).
    code = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=50,
        validators=[code_validator],
        help_text="What `profile=` may name instead of the id (empty or absent: made from the "
        "name on create, unchanged on update).",
    )
    agency_id = reference_id_field(
        required=False, help_text="Required only when you act for several agencies."
    )
    agency_name = StrictCharField(source="agency.name", read_only=True)
    built_in = StrictBooleanField(read_only=True)
    rules = RulesField()

    class Meta:
        model = RequirementProfile
        fields = [
            "id",
            "name",
            "code",
            "agency_id",
            "agency_name",
            "built_in",
            "rules",
            *AUDIT_FIELDS,
        ]
        read_only_fields = ["id"]

    def validate(self, attrs):
        if self.instance is None:
            missing = {f: ["This field is required."] for f in ("name", "rules") if f not in attrs}
            if missing:
                raise serializers.ValidationError(missing)
        return attrs
