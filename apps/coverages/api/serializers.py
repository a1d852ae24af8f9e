from __future__ import annotations

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied, ValidationError

from apps.compliance.selectors import ProfileChoice, requirement_profile_resolve
from apps.compliance.serializers import ProfileRefField, compliance_field
from apps.core.identifiers import parse_vin
from apps.core.params import (
    AsOfParam,
    DotListParam,
    DotParam,
    IdParam,
    PlateParam,
    QueryParam,
    QueryParameters,
)
from apps.core.serializers import (
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    reference_id_field,
)
from apps.coverages.choices import (
    VEHICLE_VERIFICATION_STATUSES,
    VERIFICATION_STATUSES,
    CoverageStatus,
)
from apps.coverages.serializers import LimitSerializer
from apps.masterdata.lookup import resolve
from apps.masterdata.models import State
from apps.vehicles.params import VinParam

MAX_DOTS = 500
MAX_BATCH = 1000


class AssignmentCreateSerializer(serializers.Serializer):
    policy_id = reference_id_field()
    policy_added_date = serializers.DateField(required=False, allow_null=True)


class VehicleAssignmentCreateSerializer(AssignmentCreateSerializer):
    vehicle_id = reference_id_field()


class DriverAssignmentCreateSerializer(AssignmentCreateSerializer):
    driver_id = reference_id_field()


class AssignmentUpdateSerializer(serializers.Serializer):
    policy_id = reference_id_field()
    coverage_status = StrictIntegerField()
    policy_added_date = serializers.DateField(required=False, allow_null=True)
    policy_removed_date = serializers.DateField(required=False, allow_null=True)


class VehicleAssignmentUpdateSerializer(AssignmentUpdateSerializer):
    vehicle_id = reference_id_field()


class DriverAssignmentUpdateSerializer(AssignmentUpdateSerializer):
    driver_id = reference_id_field()


class AssignmentSerializer(serializers.Serializer):
    """An assignment period as the coverage endpoints answer it."""

    id = StrictIntegerField()
    policy_id = StrictIntegerField()
    coverage_status = StrictIntegerField()
    coverage_status_name = serializers.SerializerMethodField()
    policy_added_date = serializers.DateField()
    policy_removed_date = serializers.DateField(allow_null=True)

    def get_coverage_status_name(self, obj) -> str:
        return CoverageStatus(obj.coverage_status).label


class VehicleAssignmentSerializer(AssignmentSerializer):
    vehicle_id = StrictIntegerField()


class DriverAssignmentSerializer(AssignmentSerializer):
    driver_id = StrictIntegerField()


# --- verification: query parameters -------------------------------------------------------


def profile_choice(request, raw) -> ProfileChoice | None:
    """The profile a verification names; unknown or another agency's: 400 on `profile`."""
    if raw is None or raw == "":
        return None
    if not request.user.has_perm("compliance.view_requirementprofile"):
        raise PermissionDenied("Checking against a profile needs permission to view profiles.")
    choice = None
    if len(str(raw)) <= 50:
        choice = requirement_profile_resolve(user=request.user, ref=str(raw))
    if choice is None:
        raise ValidationError({"profile": [f"No requirement profile '{raw}'."]})
    return choice


class ProfileParam(QueryParam):
    """A requirement profile's id or code, resolved for the caller."""

    def to_internal_value(self, data) -> ProfileChoice | None:
        return profile_choice(self.context["request"], data)


class StateParam(QueryParam):
    """A state by name or USPS code."""

    def to_internal_value(self, data) -> State:
        return resolve(State, data)


class ClientVerificationParams(QueryParameters):
    one_of = ("dots", "dot", "id")
    as_of = AsOfParam()
    profile = ProfileParam()
    dots = DotListParam(most=MAX_DOTS)
    dot = DotParam()
    id = IdParam()


class VehicleVerificationParams(QueryParameters):
    one_of = ("vin", "license_plate")
    as_of = AsOfParam()
    profile = ProfileParam()
    vin = VinParam()
    license_plate_state = StateParam()
    license_plate = PlateParam()

    def to_internal_value(self, data):
        if data.get("vin") not in (None, ""):  # a VIN lookup ignores the plate's state
            data = data.copy()
            data.pop("licensePlateState", None)
        return super().to_internal_value(data)


# --- verification (documented shapes) ------------------------------------------------------


class ClientRefSerializer(serializers.Serializer):
    id = StrictIntegerField()
    client_name = StrictCharField()
    dot = StrictCharField(allow_null=True)
    agency_id = StrictIntegerField()
    agency_name = StrictCharField()


class CoverageRefSerializer(serializers.Serializer):
    policy_id = StrictIntegerField()
    policy_number = StrictCharField(allow_null=True)
    coverage_type = StrictCharField()
    coverage_type_name = StrictCharField()
    insurer_name = StrictCharField(allow_null=True)
    naic = StrictCharField(allow_null=True)
    am_best_rating = StrictCharField(allow_null=True)
    effective_date = serializers.DateField()
    expiration_date = serializers.DateField()
    status = StrictCharField()
    limits = LimitSerializer(many=True)


class VehicleCoverageRefSerializer(CoverageRefSerializer):
    coverage_status = StrictIntegerField()
    coverage_status_name = StrictCharField()
    policy_added_date = serializers.DateField()


class VehicleRefSerializer(serializers.Serializer):
    id = StrictIntegerField()
    vin = StrictCharField()
    unit = StrictCharField()
    model_year = StrictIntegerField()
    make = StrictCharField()
    license_plate = StrictCharField()
    license_plate_state = StrictCharField(allow_null=True)


class ClientVerificationSerializer(serializers.Serializer):
    dot = StrictCharField(allow_null=True)
    found = StrictBooleanField()
    verified = StrictBooleanField()
    status = serializers.ChoiceField(choices=VERIFICATION_STATUSES)
    client = ClientRefSerializer(allow_null=True)
    coverages = CoverageRefSerializer(many=True)
    compliance = compliance_field()


class ClientVerificationResponseSerializer(serializers.Serializer):
    as_of = serializers.DateField()
    results = ClientVerificationSerializer(many=True)


class VehicleVerificationSerializer(serializers.Serializer):
    vehicle = VehicleRefSerializer()
    client = ClientRefSerializer()
    verified = StrictBooleanField()
    status = serializers.ChoiceField(choices=VEHICLE_VERIFICATION_STATUSES)
    coverages = VehicleCoverageRefSerializer(many=True)
    compliance = compliance_field()


class VehicleVerificationResponseSerializer(serializers.Serializer):
    as_of = serializers.DateField()
    results = VehicleVerificationSerializer(many=True)


class FleetRequestSerializer(serializers.Serializer):
    vins = serializers.ListField(child=StrictCharField(max_length=64), required=False, default=list)
    license_plates = serializers.ListField(
        child=StrictCharField(max_length=15), required=False, default=list
    )
    as_of = serializers.DateField(required=False, allow_null=True)
    profile = ProfileRefField(
        required=False, help_text="A requirement profile's id or code: adds `compliance`."
    )

    def validate_vins(self, values):
        cleaned, errors = [], {}
        for index, value in enumerate(values):
            try:
                cleaned.append(parse_vin(value, field=index))
            except serializers.ValidationError as exc:
                errors.update(exc.detail)
        if errors:
            raise serializers.ValidationError(errors)
        return cleaned

    def validate_license_plates(self, values):
        cleaned = [v.strip() for v in values]
        blank = {i: ["A plate cannot be blank."] for i, v in enumerate(cleaned) if not v}
        if blank:
            raise serializers.ValidationError(blank)
        return cleaned

    def validate(self, attrs):
        total = len(attrs["vins"]) + len(attrs["license_plates"])
        if total == 0:
            raise serializers.ValidationError({"vins": ["Send at least one VIN or plate."]})
        if total > MAX_BATCH:
            raise serializers.ValidationError(
                {"vins": [f"At most {MAX_BATCH} VINs and plates together."]}
            )
        return attrs


class FleetEntrySerializer(serializers.Serializer):
    vin = StrictCharField(required=False)
    license_plate = StrictCharField(required=False)
    found = StrictBooleanField()
    verified = StrictBooleanField()
    status = serializers.ChoiceField(choices=VERIFICATION_STATUSES)
    vehicle = VehicleRefSerializer(allow_null=True)
    client = ClientRefSerializer(allow_null=True)
    coverages = VehicleCoverageRefSerializer(many=True)
    compliance = compliance_field()


class FleetSummarySerializer(serializers.Serializer):
    requested = StrictIntegerField()
    covered = StrictIntegerField()
    uncovered = StrictIntegerField()
    not_found = StrictIntegerField()
    compliance = inline_serializer(
        "FleetComplianceSummary",
        fields={
            "pass": StrictIntegerField(),
            "caution": StrictIntegerField(),
            "fail": StrictIntegerField(),
        },
        required=False,
        help_text="With a profile: how many found units PASS, CAUTION and FAIL.",
    )


class FleetResponseSerializer(serializers.Serializer):
    as_of = serializers.DateField()
    results = FleetEntrySerializer(many=True)
    summary = FleetSummarySerializer()
