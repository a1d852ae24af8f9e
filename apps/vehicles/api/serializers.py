from __future__ import annotations

import functools

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.history import SHOWN, api_field_names, audit_trail
from apps.core.identifiers import VIN_MESSAGE, is_vin, normalize_vin
from apps.core.people import people_for
from apps.core.serializers import (
    AUDIT_FIELDS,
    AuditedModelSerializer,
    CaseInsensitiveChoiceField,
    MoneyField,
    PersonField,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictMoneyField,
    UtcDateTimeField,
    reference_id_field,
    require_on_create,
)
from apps.coverages.serializers import (
    ISO,
    AssignmentSummarySerializer,
    CoverageStatusNameField,
    covering,
    set_context_unit,
)
from apps.masterdata.lookup import MasterDataField, MasterDataIdField
from apps.masterdata.models import Make, State, UnitType
from apps.vehicles.choices import VehicleStatus
from apps.vehicles.models import Vehicle
from apps.vehicles.selectors import (
    vehicle_history,
    vehicle_premiums,
)


class VinField(serializers.CharField):
    """A VIN: 17 characters of the VIN alphabet (no I, O or Q); case is ignored."""

    default_error_messages = {"invalid_vin": VIN_MESSAGE}

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 64)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = normalize_vin(super().to_internal_value(data))
        if not is_vin(value):
            self.fail("invalid_vin")
        return value


class VehicleSerializer(AuditedModelSerializer):
    """A vehicle as listed, created and updated."""

    client_id = reference_id_field()
    client_name = StrictCharField(source="client.client_name", read_only=True)
    unit = StrictCharField(max_length=40)
    unit_type_id = MasterDataIdField(UnitType, source="unit_type")
    unit_type = MasterDataField(UnitType)
    unit_type_name = MasterDataField(UnitType, source="unit_type")
    power_unit = StrictBooleanField(source="unit_type.is_power_unit", read_only=True)
    model_year = StrictIntegerField(min_value=1900, max_value=2100)
    make_id = MasterDataIdField(Make, source="make")
    makes = MasterDataField(Make, source="make")
    make_company_name = MasterDataField(Make, source="make")
    serial_number = VinField()
    vin = StrictCharField(source="serial_number", read_only=True)
    license_plate = StrictCharField(required=False, allow_blank=True, max_length=15)
    license_plate_state_id = MasterDataIdField(State, source="license_plate_state")
    license_plate_state = MasterDataField(State)
    license_plate_state_name = MasterDataField(State, source="license_plate_state")
    owner = StrictCharField(required=False, allow_blank=True, max_length=200)
    garaging_address = StrictCharField(required=False, allow_blank=True, max_length=300)
    stated_value = StrictMoneyField(required=False, allow_null=True, min_value=0)
    status = CaseInsensitiveChoiceField(choices=VehicleStatus.choices, required=False)
    lienholder_id = reference_id_field(required=False, allow_null=True)
    lienholder_name = StrictCharField(
        source="lienholder.name", read_only=True, default=None, allow_null=True
    )
    deleted = StrictBooleanField(required=False)
    make = MasterDataField(Make, read_only=True)

    class Meta:
        model = Vehicle
        fields = [
            "id",
            "client_id",
            "client_name",
            "unit",
            "unit_type_id",
            "unit_type",
            "unit_type_name",
            "power_unit",
            "model_year",
            "make_id",
            "makes",
            "make_company_name",
            "serial_number",
            "vin",
            "license_plate",
            "license_plate_state_id",
            "license_plate_state",
            "license_plate_state_name",
            "owner",
            "garaging_address",
            "stated_value",
            "status",
            "lienholder_id",
            "lienholder_name",
            "deleted",
            *AUDIT_FIELDS,
            "make",
        ]
        read_only_fields = ["id"]

    def validate(self, attrs):
        require_on_create(
            self,
            attrs,
            {
                "unit_type": ("unit_type", "or unitTypeName"),
                "make": ("makes", "or makeCompanyName"),
            },
        )
        return attrs


class VehicleCoverageSummarySerializer(AssignmentSummarySerializer):
    """A vehicle's period on a policy, as the vehicle detail shows it."""

    effective_date = serializers.DateField(source="policy.effective_date", format=ISO)
    expiration_date = serializers.DateField(source="policy.expiration_date", format=ISO)


class DriverCoverageRefSerializer(serializers.Serializer):
    """An OA/DD policy a driver is scheduled on."""

    policy_id = serializers.IntegerField()
    policy_number = serializers.CharField(source="policy.policy_number", allow_null=True)
    coverage_type = serializers.CharField(source="policy.coverage_type.code")


class VehicleDriverSerializer(serializers.Serializer):
    """A driver linked to the vehicle, verified when an OA/DD policy covers them today."""

    driver_id = serializers.IntegerField()
    first_name = serializers.CharField(source="driver.first_name")
    last_name = serializers.CharField(source="driver.last_name")
    assigned_at = UtcDateTimeField(source="created_at")
    verified = serializers.SerializerMethodField()
    driver_coverages = serializers.SerializerMethodField()

    def _in_force(self, link) -> list:
        return covering(self.context, link.driver)

    def get_verified(self, link) -> bool:
        return bool(self._in_force(link))

    @extend_schema_field(DriverCoverageRefSerializer(many=True))
    def get_driver_coverages(self, link) -> list:
        return DriverCoverageRefSerializer(self._in_force(link), many=True).data


class LienholderRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    phone = serializers.CharField()
    address = serializers.CharField()


class UnitPremiumSerializer(serializers.Serializer):
    """What the unit costs a year on a policy that covers it."""

    policy_id = serializers.IntegerField(source="policy.id")
    policy_number = serializers.CharField(source="policy.policy_number", allow_null=True)
    coverage_type = serializers.CharField(source="policy.coverage_type.code")
    annual_premium = MoneyField()


class BillingSerializer(serializers.Serializer):
    stated_value = MoneyField(allow_null=True)
    premiums = serializers.SerializerMethodField()

    @extend_schema_field(UnitPremiumSerializer(many=True))
    def get_premiums(self, vehicle) -> list:
        premiums = vehicle_premiums(vehicle, covering(self.context, vehicle))
        return UnitPremiumSerializer(premiums, many=True).data


@functools.cache
def _vehicle_field_names() -> dict[str, str]:
    return api_field_names(VehicleSerializer)


class AuditSerializer(serializers.Serializer):
    created_at = UtcDateTimeField()
    created_by = PersonField()
    updated_at = UtcDateTimeField()
    updated_by = PersonField()
    changes = serializers.SerializerMethodField()
    change_count = serializers.SerializerMethodField()

    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_changes(self, vehicle) -> list:
        """The newest SHOWN changes; `changeCount` says how many there are in all."""
        people = people_for(self.context["request"].user)
        return audit_trail(self._records(vehicle)[:SHOWN], _vehicle_field_names(), people)

    def get_change_count(self, vehicle) -> int:
        return len(self._records(vehicle))

    def _records(self, vehicle) -> list:
        """The vehicle's audit records, read once for both fields."""
        records = self.__dict__.setdefault("_history", {})
        if vehicle.pk not in records:
            user = self.context["request"].user
            records[vehicle.pk] = vehicle_history(vehicle, user=user)
        return records[vehicle.pk]


class VehicleDetailSerializer(VehicleSerializer):
    """The complete vehicle: drivers, coverages, policies, lienholder, billing and audit."""

    driver_assignments = VehicleDriverSerializer(source="driver_links", many=True, read_only=True)
    policy_associations = VehicleCoverageSummarySerializer(
        source="coverages", many=True, read_only=True
    )
    coverage_types = serializers.SerializerMethodField()
    covered = serializers.SerializerMethodField()
    lienholder = LienholderRefSerializer(read_only=True, allow_null=True)
    billing = BillingSerializer(source="*", read_only=True)
    audit = AuditSerializer(source="*", read_only=True)

    class Meta(VehicleSerializer.Meta):
        fields = [
            *VehicleSerializer.Meta.fields,
            "driver_assignments",
            "policy_associations",
            "coverage_types",
            "covered",
            "lienholder",
            "billing",
            "audit",
        ]

    def to_representation(self, vehicle):
        set_context_unit(self.context, vehicle)
        return super().to_representation(vehicle)

    def _covering(self, vehicle) -> list:
        return covering(self.context, vehicle)

    def get_coverage_types(self, vehicle) -> list[str]:
        return sorted({a.policy.coverage_type.code for a in self._covering(vehicle)})

    def get_covered(self, vehicle) -> bool:
        return bool(self._covering(vehicle))


class LienholderVehicleSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    vin = serializers.CharField(source="serial_number")
    unit = serializers.CharField()
    model_year = serializers.IntegerField()
    make = serializers.CharField(source="make.name")
    stated_value = MoneyField(allow_null=True)
    power_unit = serializers.BooleanField(source="unit_type.is_power_unit")


class LienholderDetailSerializer(serializers.Serializer):
    """A lienholder with its totals (annotated by `lienholder_detail`) and its live vehicles."""

    lienholder_id = StrictIntegerField(source="id")
    lienholder_name = StrictCharField(source="name")
    phone = StrictCharField()
    address = StrictCharField()
    agency = StrictCharField(source="agency.name")
    agency_id = StrictIntegerField()
    vehicle_total_count = StrictIntegerField()
    vehicle_value_total_count = MoneyField(source="vehicle_value_total")
    power_unit = StrictIntegerField()
    non_power_unit = StrictIntegerField()
    vehicles = LienholderVehicleSerializer(source="live_vehicles", many=True)


class PolicyVehicleSerializer(VehicleSerializer):
    """A vehicle of the policy (contract section 13): the fields of `GET /v1/vehicles` plus
    its latest period on this policy."""

    assignment_id = serializers.IntegerField(read_only=True)
    coverage_status = serializers.IntegerField(read_only=True)
    coverage_status_name = CoverageStatusNameField()
    policy_added_date = serializers.DateField(read_only=True)
    policy_removed_date = serializers.DateField(read_only=True, allow_null=True)

    class Meta(VehicleSerializer.Meta):
        fields = [
            *(name for name in VehicleSerializer.Meta.fields if name != "make"),
            "assignment_id",
            "coverage_status",
            "coverage_status_name",
            "policy_added_date",
            "policy_removed_date",
            "make",  # last, where the list has always shown it
        ]
