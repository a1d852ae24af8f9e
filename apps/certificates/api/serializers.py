"""The documented shape of the certificate (contract section 9)."""

from __future__ import annotations

from rest_framework import serializers

from apps.coverages.api.serializers import LimitSerializer


class PartySerializer(serializers.Serializer):
    name = serializers.CharField()
    address = serializers.CharField()


class ProducerSerializer(PartySerializer):
    contact_name = serializers.CharField()
    phone = serializers.CharField()
    email = serializers.CharField()


class InsuredSerializer(PartySerializer):
    dot = serializers.CharField(allow_null=True)


class InsurerSerializer(serializers.Serializer):
    letter = serializers.CharField()
    name = serializers.CharField()
    naic = serializers.CharField()


class CoverageRowSerializer(serializers.Serializer):
    insurer_letter = serializers.CharField()
    coverage_type = serializers.CharField()
    type_of_insurance = serializers.CharField()
    additional_insured = serializers.BooleanField()
    subrogation_waived = serializers.BooleanField()
    policy_number = serializers.CharField()
    effective_date = serializers.DateField()
    expiration_date = serializers.DateField()
    covered_autos = serializers.CharField(allow_null=True)
    limits = LimitSerializer(many=True)


class VehicleLineSerializer(serializers.Serializer):
    year = serializers.IntegerField()
    make = serializers.CharField()
    unit = serializers.CharField()
    vin = serializers.CharField()


class RemarksSerializer(serializers.Serializer):
    title = serializers.CharField()
    insurers = InsurerSerializer(many=True)
    coverages = CoverageRowSerializer(many=True)


class CertificateSerializer(serializers.Serializer):
    form = serializers.CharField()
    form_edition = serializers.CharField()
    certificate_number = serializers.CharField()
    date_issued = serializers.DateField()
    as_of = serializers.DateField()
    disclaimer = serializers.CharField()
    producer = ProducerSerializer()
    insured = InsuredSerializer()
    insurers = InsurerSerializer(many=True)
    coverages = CoverageRowSerializer(many=True)
    description_of_operations = serializers.CharField()
    vehicles = VehicleLineSerializer(many=True)
    vehicle_count = serializers.IntegerField()
    certificate_holder = PartySerializer()
    cancellation = serializers.CharField()
    authorized_representative = serializers.CharField()
    additional_remarks = RemarksSerializer(many=True)
    verify_at = serializers.CharField()
