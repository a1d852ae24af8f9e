from __future__ import annotations

from rest_framework import serializers

from apps.core.dates import today
from apps.core.serializers import (
    AUDIT_FIELDS,
    AsciiDateField,
    AuditedModelSerializer,
    SoftDeletedFields,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictMoneyField,
    reference_id_field,
    require_on_create,
)
from apps.masterdata.lookup import MasterDataField, MasterDataIdField
from apps.masterdata.models import CoverageType, Insurer, State
from apps.policies.choices import CoveredAutos, LimitName, PolicyStatus
from apps.policies.models import Policy


class PolicyLimitSerializer(serializers.Serializer):
    name = serializers.ChoiceField(choices=LimitName.choices)
    amount = StrictMoneyField(min_value=0)


class PolicyStatusField(serializers.ChoiceField):
    """A policy's `status`: the reads' annotation (`with_status`, on the day they ask), else,
    for a policy a write has just saved and announces (`record("policy", …)`), the same rule
    in Python from its dates, today (`PolicyTerm.status_on`), so an event's record shows it as
    the GET does; no query either way."""

    def __init__(self, **kwargs):
        super().__init__(choices=PolicyStatus.choices, read_only=True, **kwargs)

    def get_attribute(self, instance):
        annotated = getattr(instance, "status", None)
        return annotated if annotated is not None else instance.status_on(today())


class PolicySerializer(SoftDeletedFields, AuditedModelSerializer):
    """A policy; master data by name (or id); `status` is derived from the dates."""

    policy_number = StrictCharField(
        max_length=60, required=False, allow_null=True, allow_blank=True
    )
    client_id = reference_id_field()
    client_name = StrictCharField(source="client.client_name", read_only=True)
    agency_id = StrictIntegerField(source="client.agency_id", read_only=True)
    coverage_type_id = MasterDataIdField(CoverageType, source="coverage_type")
    coverage_type = MasterDataField(CoverageType, display="code")
    full_coverage_type_name = MasterDataField(CoverageType, source="coverage_type")
    insurer_id = MasterDataIdField(Insurer, source="insurer")
    insurer_name = MasterDataField(Insurer, source="insurer")
    naic = StrictCharField(source="insurer.naic", read_only=True, default=None, allow_null=True)
    state_id = MasterDataIdField(State, source="state")
    state_name = MasterDataField(State, source="state")
    producer_id = reference_id_field(required=False, allow_null=True)
    producer_name = StrictCharField(
        required=False, allow_null=True, allow_blank=True, max_length=200
    )
    effective_date = AsciiDateField()
    expiration_date = AsciiDateField()
    cancellation_date = AsciiDateField(required=False, allow_null=True)
    status = PolicyStatusField()
    premium = StrictMoneyField(required=False, allow_null=True, min_value=0)
    additional_insured = StrictBooleanField(required=False)
    subrogation_waived = StrictBooleanField(required=False)
    covered_autos = serializers.ChoiceField(
        choices=CoveredAutos.choices, required=False, allow_blank=True
    )
    description = StrictCharField(required=False, allow_blank=True, max_length=4000)
    limits = PolicyLimitSerializer(many=True, required=False)

    class Meta:
        model = Policy
        fields = [
            "id",
            "policy_number",
            "client_id",
            "client_name",
            "agency_id",
            "coverage_type_id",
            "coverage_type",
            "full_coverage_type_name",
            "insurer_id",
            "insurer_name",
            "naic",
            "state_id",
            "state_name",
            "producer_id",
            "producer_name",
            "effective_date",
            "expiration_date",
            "cancellation_date",
            "status",
            "premium",
            "additional_insured",
            "subrogation_waived",
            "covered_autos",
            "description",
            "limits",
            *SoftDeletedFields.field_names,
            *AUDIT_FIELDS,
        ]
        read_only_fields = ["id"]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["producer_name"] = instance.producer.name if instance.producer_id else None
        return data

    def validate_policy_number(self, value):
        return (value or "").strip() or None

    def validate(self, attrs):
        require_on_create(
            self,
            attrs,
            {"coverage_type": ("coverage_type", "or fullCoverageTypeName")},
        )
        return attrs
