"""The certificate (contract section 9) as the API answers it: these serializers shape what
the builder found, for the JSON answer and for the PDF (drawn from the same rendered data), so
the documented shape is the answer's shape and the two outputs never disagree.

They live outside `api/` because the admin's downloads and the demo seed render certificates
too (no app imports another app's `api` package).
"""

from __future__ import annotations

from rest_framework import serializers

from apps.core.serializers import StrictBooleanField, StrictCharField, StrictIntegerField
from apps.coverages.serializers import LimitSerializer

ISO = "iso-8601"


class FirstOfField(StrictCharField):
    """The first non-empty of several attributes (dotted paths), else "": the form shows the
    producer's contact, phone or address where it has one, the agency's otherwise."""

    def __init__(self, *paths: str, **kwargs):
        self.paths = [path.split(".") for path in paths]
        super().__init__(source="*", **kwargs)

    def to_representation(self, value) -> str:
        for path in self.paths:
            found = value
            for attr in path:
                found = getattr(found, attr) if found is not None else None
            if found:
                return found
        return ""


class PostalAddressField(StrictCharField):
    """A record's street, then "City, ST ZIP" on a second line (parts it lacks left out)."""

    def __init__(self, **kwargs):
        super().__init__(source="*", **kwargs)

    def to_representation(self, value) -> str:
        city, state = value.city, value.state
        place = ", ".join(
            part for part in (city.name if city else "", state.code if state else "") if part
        )
        tail = " ".join(part for part in (place, value.zip_code) if part)
        return "\n".join(part for part in (value.address, tail) if part)


class PartySerializer(serializers.Serializer):
    name = StrictCharField()
    address = StrictCharField()


# The producer box, from the client: its agency, with its producer's contact details.
class ProducerSerializer(serializers.Serializer):
    name = StrictCharField(source="agency.name")
    contact_name = FirstOfField("producer.contact_name", "producer.name")
    address = FirstOfField("producer.address", "agency.address")
    phone = FirstOfField("producer.phone", "agency.phone")
    email = FirstOfField("producer.email", "agency.email")


class InsuredSerializer(serializers.Serializer):
    name = StrictCharField(source="client_name")
    address = PostalAddressField()
    dot = StrictCharField(allow_null=True)


class InsurerSerializer(serializers.Serializer):
    letter = StrictCharField()
    name = StrictCharField()
    naic = StrictCharField()


class CoverageRowSerializer(serializers.Serializer):
    insurer_letter = StrictCharField()
    coverage_type = StrictCharField(source="policy.coverage_type.code")
    type_of_insurance = StrictCharField()
    additional_insured = StrictBooleanField(source="policy.additional_insured")
    subrogation_waived = StrictBooleanField(source="policy.subrogation_waived")
    policy_number = StrictCharField()
    effective_date = serializers.DateField(source="policy.effective_date", format=ISO)
    expiration_date = serializers.DateField(source="policy.expiration_date", format=ISO)
    covered_autos = StrictCharField(allow_null=True)
    limits = LimitSerializer(source="policy.limit_rows", many=True)


class VehicleLineSerializer(serializers.Serializer):
    year = StrictIntegerField(source="model_year")
    make = StrictCharField(source="make.name")
    unit = StrictCharField()
    vin = StrictCharField(source="serial_number")


class RemarksSerializer(serializers.Serializer):
    title = StrictCharField()
    insurers = InsurerSerializer(many=True)
    coverages = CoverageRowSerializer(many=True)


class CertificateSerializer(serializers.Serializer):
    form = StrictCharField()
    form_edition = StrictCharField()
    certificate_number = StrictCharField()
    date_issued = serializers.DateField(format=ISO)
    as_of = serializers.DateField(format=ISO)
    disclaimer = StrictCharField()
    producer = ProducerSerializer(source="client")
    insured = InsuredSerializer(source="client")
    insurers = InsurerSerializer(many=True)
    coverages = CoverageRowSerializer(many=True)
    description_of_operations = StrictCharField()
    vehicles = VehicleLineSerializer(many=True)
    vehicle_count = StrictIntegerField()
    certificate_holder = PartySerializer()
    cancellation = StrictCharField()
    authorized_representative = FirstOfField(
        "client.producer.contact_name", "client.producer.name", "client.agency.name"
    )
    additional_remarks = RemarksSerializer(many=True)
    verify_at = StrictCharField()
