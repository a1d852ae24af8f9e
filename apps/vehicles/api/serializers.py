from __future__ import annotations

import datetime as dt

from django.utils import timezone
from rest_framework import serializers

from apps.core.history import audit_trail
from apps.core.money import format_money
from apps.core.serializers import (
    AuditedModelSerializer,
    MoneyField,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictMoneyField,
    reference_id_field,
    require_on_create,
)
from apps.coverages.choices import CoverageStatus
from apps.coverages.selectors import assignment_summary
from apps.masterdata.lookup import MasterDataField, MasterDataIdField
from apps.masterdata.models import Make, State, UnitType
from apps.policies.rating import annual_unit_premium
from apps.vehicles.choices import VehicleStatus
from apps.vehicles.models import VIN_RE, Vehicle
from apps.vehicles.selectors import vehicle_history


class VinField(serializers.CharField):
    """A VIN: 17 characters of the VIN alphabet (no I, O or Q); case is ignored."""

    default_error_messages = {"invalid_vin": "A VIN is 17 characters of A-H, J-N, P, R-Z and 0-9."}

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 64)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data).strip().upper()
        if not VIN_RE.match(value):
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
    status = serializers.ChoiceField(choices=VehicleStatus.choices, required=False)
    lienholder_id = reference_id_field(required=False, allow_null=True)
    lienholder_name = StrictCharField(
        source="lienholder.name", read_only=True, default=None, allow_null=True
    )
    deleted = StrictBooleanField(required=False)

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
            "created_at",
            "updated_at",
            "created_by",
            "updated_by",
        ]
        read_only_fields = ["id"]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["make"] = data["makes"]
        return data

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("status"), str):
            data = {**data, "status": data["status"].strip().upper()}
        return super().to_internal_value(data)

    def validate_model_year(self, value):
        if value > timezone.localdate().year + 2:
            raise serializers.ValidationError("Model year is too far in the future.")
        return value

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


class VehicleCoverageSummarySerializer(serializers.Serializer):
    """A vehicle's period on a policy, as the vehicle detail shows it."""

    def to_representation(self, assignment):
        policy = assignment.policy
        return {
            **assignment_summary(assignment, self.context["on"]),
            "effective_date": policy.effective_date.isoformat(),
            "expiration_date": policy.expiration_date.isoformat(),
        }


def _billing(vehicle: Vehicle, on: dt.date) -> dict:
    premiums = []
    for assignment in vehicle.coverages.all():
        if assignment.coverage_status != CoverageStatus.SCHEDULED_UNIT:
            continue
        policy = assignment.policy
        rate = next((r for r in policy.rates.all() if r.unit_type_id == vehicle.unit_type_id), None)
        premiums.append(
            {
                "policy_id": policy.id,
                "policy_number": policy.policy_number,
                "coverage_type": policy.coverage_type.code,
                "annual_premium": format_money(annual_unit_premium(rate, vehicle.stated_value)),
            }
        )
    return {
        "stated_value": format_money(vehicle.stated_value),
        "premiums": premiums,
    }


def _driver_verification(driver, on: dt.date) -> dict:
    """The OA/DD policies the driver is scheduled on and in force today (prefetched)."""
    in_force = [
        {
            "policy_id": c.policy_id,
            "policy_number": c.policy.policy_number,
            "coverage_type": c.policy.coverage_type.code,
        }
        for c in driver.coverages.all()
        if c.covers_on(on) and c.policy.in_force_on(on)
    ]
    return {"verified": bool(in_force), "driver_coverages": in_force}


class VehicleDetailSerializer(VehicleSerializer):
    """The complete vehicle: drivers, coverages, policies, lienholder, billing and audit."""

    def to_representation(self, instance):
        data = super().to_representation(instance)
        on = timezone.localdate()
        coverages = VehicleCoverageSummarySerializer(
            instance.coverages.all(), many=True, context={"on": on}
        ).data
        data["driver_assignments"] = [
            {
                "driver_id": link.driver_id,
                "first_name": link.driver.first_name,
                "last_name": link.driver.last_name,
                "assigned_at": link.created_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                **_driver_verification(link.driver, on),
            }
            for link in instance.driver_links.all()
        ]
        data["policy_associations"] = coverages
        data["coverage_types"] = sorted({c["coverage_type"] for c in coverages if c["covered"]})
        data["covered"] = any(c["covered"] for c in coverages)
        lienholder = instance.lienholder
        data["lienholder"] = (
            {
                "id": lienholder.id,
                "name": lienholder.name,
                "phone": lienholder.phone,
                "address": lienholder.address,
            }
            if lienholder
            else None
        )
        data["billing"] = _billing(instance, on)
        data["audit"] = {
            "created_at": data["created_at"],
            "created_by": data["created_by"],
            "updated_at": data["updated_at"],
            "updated_by": data["updated_by"],
            "changes": audit_trail(vehicle_history(instance)),
        }
        return data


class LienholderVehicleSerializer(serializers.Serializer):
    def to_representation(self, vehicle):
        return {
            "id": vehicle.id,
            "vin": vehicle.serial_number,
            "unit": vehicle.unit,
            "model_year": vehicle.model_year,
            "make": vehicle.make.name,
            "stated_value": format_money(vehicle.stated_value),
            "power_unit": vehicle.unit_type.is_power_unit,
        }


class LienholderDetailSerializer(serializers.Serializer):
    lienholder_id = StrictIntegerField()
    lienholder_name = StrictCharField()
    phone = StrictCharField()
    address = StrictCharField()
    agency = StrictCharField()
    agency_id = StrictIntegerField()
    vehicle_total_count = StrictIntegerField()
    vehicle_value_total_count = MoneyField()
    power_unit = StrictIntegerField()
    non_power_unit = StrictIntegerField()
    vehicles = LienholderVehicleSerializer(many=True)
