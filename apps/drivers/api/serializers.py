from __future__ import annotations

from rest_framework import serializers

from apps.core.serializers import (
    AUDIT_FIELDS,
    AuditedModelSerializer,
    CaseInsensitiveChoiceField,
    DriverDateField,
    StrictCharField,
    StrictIntegerField,
    UtcDateTimeField,
    reference_id_field,
    require_on_create,
)
from apps.coverages.serializers import (
    AssignmentSummarySerializer,
    covering,
    set_context_unit,
)
from apps.drivers.choices import DriverStatus
from apps.drivers.models import Driver
from apps.masterdata.lookup import (
    AddressFields,
    MasterDataField,
    MasterDataIdField,
    resolve_cities,
)
from apps.masterdata.models import DriverType, LicenseType, State


class DriverSerializer(AddressFields, AuditedModelSerializer):
    """A driver; dates are MM-dd-yyyy, master data by name or id."""

    client_id = reference_id_field()
    client_name = StrictCharField(source="client.client_name", read_only=True)
    first_name = StrictCharField(max_length=100)
    last_name = StrictCharField(max_length=100)
    driver_type_id = MasterDataIdField(DriverType, source="driver_type")
    driver_type = MasterDataField(DriverType)
    date_of_birth = DriverDateField()
    hire_date = DriverDateField()
    license_number = StrictCharField(required=False, allow_blank=True, max_length=40)
    license_state_id = MasterDataIdField(State, source="license_state")
    license_state = MasterDataField(State)
    license_expiration_date = DriverDateField()
    dl_type_id = MasterDataIdField(LicenseType, source="dl_type")
    dl_type = MasterDataField(LicenseType)
    phone = StrictCharField(required=False, allow_blank=True, max_length=40)
    email = serializers.EmailField(required=False, allow_blank=True)
    status = CaseInsensitiveChoiceField(choices=DriverStatus.choices, required=False)

    class Meta:
        model = Driver
        fields = [
            "id",
            "client_id",
            "client_name",
            "first_name",
            "last_name",
            "driver_type_id",
            "driver_type",
            "date_of_birth",
            "hire_date",
            "license_number",
            "license_state_id",
            "license_state",
            "license_expiration_date",
            "dl_type_id",
            "dl_type",
            *AddressFields.field_names,
            "phone",
            "email",
            "status",
            *AUDIT_FIELDS,
        ]
        read_only_fields = ["id"]

    def validate(self, attrs):
        require_on_create(self, attrs, {"driver_type": ("driver_type", "a driver type name")})
        return resolve_cities(attrs, self.instance, [("city", "state")])


class DriverVehicleRefSerializer(serializers.Serializer):
    vehicle_id = serializers.IntegerField()
    unit = serializers.CharField(source="vehicle.unit")
    vin = serializers.CharField(source="vehicle.serial_number")


class DriverDetailSerializer(DriverSerializer):
    """The driver with its vehicles and its OA/DD coverage, in force or not today."""

    vehicles = DriverVehicleRefSerializer(source="vehicle_links", many=True, read_only=True)
    coverages = AssignmentSummarySerializer(many=True, read_only=True)
    verified = serializers.SerializerMethodField()

    class Meta(DriverSerializer.Meta):
        fields = [*DriverSerializer.Meta.fields, "vehicles", "coverages", "verified"]

    def to_representation(self, driver):
        set_context_unit(self.context, driver)
        return super().to_representation(driver)

    def get_verified(self, driver) -> bool:
        return bool(covering(self.context, driver))


class DriverVehicleRequestSerializer(DriverSerializer):
    """POST /v1/drivers/vehicles: a vehicle and a driver (existing, or 0 to create one)."""

    vehicle_id = reference_id_field()
    driver_id = reference_id_field(min_value=0)  # 0: a new driver
    client_id = reference_id_field(required=False)
    first_name = StrictCharField(max_length=100, required=False)
    last_name = StrictCharField(max_length=100, required=False)

    class Meta(DriverSerializer.Meta):
        fields = ["vehicle_id", "driver_id", *DriverSerializer.Meta.fields]

    def validate(self, attrs):
        return resolve_cities(attrs, None, [("city", "state")])


class DriverVehicleSerializer(serializers.Serializer):
    id = StrictIntegerField()
    driver_id = StrictIntegerField()
    vehicle_id = StrictIntegerField()
    created_at = UtcDateTimeField()
    driver = DriverSerializer()
