from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.clients.models import CargoClass, Client
from apps.core.identifiers import DOT_MESSAGE, dot_or_none
from apps.core.serializers import (
    AUDIT_FIELDS,
    AuditedModelSerializer,
    SoftDeletedFields,
    StrictBooleanField,
    StrictCharField,
    reference_id_field,
)
from apps.masterdata.lookup import (
    AddressFields,
    MasterDataField,
    MasterDataIdField,
    address_fields,
    resolve_cities,
)
from apps.masterdata.models import ClientType

MailingAddressFields = address_fields("mailing_")


@extend_schema_field(
    {
        "type": "string",
        "nullable": True,
        "pattern": r"^0*[1-9][0-9]{0,7}$",
        "description": "The USDOT number: digits, leading zeros dropped, then 1 to 8 of them.",
    }
)
class DotTextField(StrictCharField):
    """A client's DOT as text; the schema says what `dot_or_none` takes (zeros dropped
    first, then 1 to 8 digits, not all zeros), which no length on the text sent could."""


class ClientSerializer(
    AddressFields, MailingAddressFields, SoftDeletedFields, AuditedModelSerializer
):
    """A client as read and written; master data by name or id, ids for references."""

    client_name = StrictCharField(max_length=200)
    agency_id = reference_id_field()
    agency_name = StrictCharField(source="agency.name", read_only=True)
    producer_id = reference_id_field(required=False, allow_null=True)
    producer_name = StrictCharField(
        source="producer.name", read_only=True, default=None, allow_null=True
    )
    parent_client_id = reference_id_field(required=False, allow_null=True)
    # Read by `validate_dot` alone (apps.core.identifiers: zeros dropped, then 1 to 8 digits):
    # a length check on the text as sent refused 0005550006, which is DOT 5550006.
    dot = DotTextField(required=False, allow_null=True)
    client_type_id = MasterDataIdField(ClientType, source="client_type")
    client_type = MasterDataField(ClientType)
    acord_enabled = StrictBooleanField(required=False)
    cargo_class = serializers.ChoiceField(
        choices=CargoClass.choices,
        required=False,
        help_text="What the carrier hauls; sets its federal minimum of auto liability "
        "(49 CFR 387.9). Default GENERAL_FREIGHT.",
    )
    phone = StrictCharField(required=False, allow_blank=True, max_length=40)
    email = serializers.EmailField(required=False, allow_blank=True)

    class Meta:
        model = Client
        fields = [
            "id",
            "client_name",
            "agency_id",
            "agency_name",
            "producer_id",
            "producer_name",
            "parent_client_id",
            "dot",
            "client_type_id",
            "client_type",
            "acord_enabled",
            "cargo_class",
            *AddressFields.field_names,
            *MailingAddressFields.field_names,
            "phone",
            "email",
            *SoftDeletedFields.field_names,
            *AUDIT_FIELDS,
        ]
        read_only_fields = ["id"]

    def validate_dot(self, value):
        """Stored and compared in its normal form: 01234567 is 1234567; what is no DOT (all
        zeros, more than 8 digits once the zeros are dropped) is a 400."""
        if value is None:
            return None
        dot = dot_or_none(value)
        if dot is None:
            raise serializers.ValidationError(DOT_MESSAGE, code="invalid")
        return dot

    def validate(self, attrs):
        return resolve_cities(
            attrs, self.instance, [("city", "state"), ("mailing_city", "mailing_state")]
        )
