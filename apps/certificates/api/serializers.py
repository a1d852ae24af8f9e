"""The certificate (contract section 9): these serializers render the JSON answer, so the
documented shape is the answer's shape; the PDF is drawn from the same rendered data."""

from __future__ import annotations

from rest_framework import serializers

from apps.core.serializers import StrictBooleanField, StrictCharField, StrictIntegerField
from apps.coverages.serializers import LimitSerializer


class PartySerializer(serializers.Serializer):
    name = StrictCharField()
    address = StrictCharField()


class ProducerSerializer(serializers.Serializer):
    name = StrictCharField()
    contact_name = StrictCharField()
    address = StrictCharField()
    phone = StrictCharField()
    email = StrictCharField()


class InsuredSerializer(PartySerializer):
    dot = StrictCharField(allow_null=True)


class InsurerSerializer(serializers.Serializer):
    letter = StrictCharField()
    name = StrictCharField()
    naic = StrictCharField()


class CoverageRowSerializer(serializers.Serializer):
    insurer_letter = StrictCharField()
    coverage_type = StrictCharField()
    type_of_insurance = StrictCharField()
    additional_insured = StrictBooleanField()
    subrogation_waived = StrictBooleanField()
    policy_number = StrictCharField()
    effective_date = serializers.DateField()
    expiration_date = serializers.DateField()
    covered_autos = StrictCharField(allow_null=True)
    limits = LimitSerializer(many=True)


class VehicleLineSerializer(serializers.Serializer):
    year = StrictIntegerField()
    make = StrictCharField()
    unit = StrictCharField()
    vin = StrictCharField()


class RemarksSerializer(serializers.Serializer):
    title = StrictCharField()
    insurers = InsurerSerializer(many=True)
    coverages = CoverageRowSerializer(many=True)


class CertificateSerializer(serializers.Serializer):
    form = StrictCharField()
    form_edition = StrictCharField()
    certificate_number = StrictCharField()
    date_issued = serializers.DateField()
    as_of = serializers.DateField()
    disclaimer = StrictCharField()
    producer = ProducerSerializer()
    insured = InsuredSerializer()
    insurers = InsurerSerializer(many=True)
    coverages = CoverageRowSerializer(many=True)
    description_of_operations = StrictCharField()
    vehicles = VehicleLineSerializer(many=True)
    vehicle_count = StrictIntegerField()
    certificate_holder = PartySerializer()
    cancellation = StrictCharField()
    authorized_representative = StrictCharField()
    additional_remarks = RemarksSerializer(many=True)
    verify_at = StrictCharField()
