"""A fleet's unit list as a file: the columns staff import and export (see
apps.core.admin_import for the rules every row goes through)."""

from __future__ import annotations

from import_export import fields, widgets

from apps.core.admin_import import (
    ChoiceWidget,
    ClientByDotWidget,
    LookupWidget,
    MoneyWidget,
    ServiceResource,
    TextWidget,
    YearWidget,
)
from apps.masterdata.models import Make, State, UnitType
from apps.vehicles.choices import VehicleStatus
from apps.vehicles.models import VIN_RE, Vehicle, normalize_vin
from apps.vehicles.services import VEHICLE_FIELDS, vehicle_create


class VinWidget(widgets.Widget):
    def clean(self, value, row=None, **kwargs):
        vin = normalize_vin(str(value or ""))
        if not vin:
            raise ValueError("The VIN is missing.")
        if not VIN_RE.match(vin):
            raise ValueError(f"Bad VIN “{vin}”: a VIN is 17 letters and digits, without I, O or Q.")
        return vin

    def render(self, value, obj=None, **kwargs):
        return value or ""


class VehicleResource(ServiceResource):
    """Columns: dot, unit, vin, year, make, unit_type, plate, plate_state, owner,
    garaging_address, stated_value, status."""

    service = staticmethod(vehicle_create)
    service_fields = VEHICLE_FIELDS
    error_fields = {"client_id": "client", "lienholder_id": "client"}
    required_columns = ("dot", "unit", "vin", "year", "make", "unit_type")

    dot = fields.Field(attribute="client", column_name="dot", widget=ClientByDotWidget())
    unit = fields.Field(attribute="unit", column_name="unit", widget=TextWidget())
    vin = fields.Field(attribute="serial_number", column_name="vin", widget=VinWidget())
    year = fields.Field(attribute="model_year", column_name="year", widget=YearWidget())
    make = fields.Field(attribute="make", column_name="make", widget=LookupWidget("make", Make))
    unit_type = fields.Field(
        attribute="unit_type", column_name="unit_type", widget=LookupWidget("unit type", UnitType)
    )
    plate = fields.Field(attribute="license_plate", column_name="plate", widget=TextWidget())
    plate_state = fields.Field(
        attribute="license_plate_state",
        column_name="plate_state",
        widget=LookupWidget("state", State, codes=True, render_attr="code"),
    )
    owner = fields.Field(attribute="owner", column_name="owner", widget=TextWidget())
    garaging_address = fields.Field(
        attribute="garaging_address", column_name="garaging_address", widget=TextWidget()
    )
    stated_value = fields.Field(
        attribute="stated_value", column_name="stated_value", widget=MoneyWidget()
    )
    status = fields.Field(
        attribute="status",
        column_name="status",
        widget=ChoiceWidget("status", VehicleStatus.choices, VehicleStatus.ACTIVE),
    )

    class Meta(ServiceResource.Meta):
        model = Vehicle
        fields = (
            "dot",
            "unit",
            "vin",
            "year",
            "make",
            "unit_type",
            "plate",
            "plate_state",
            "owner",
            "garaging_address",
            "stated_value",
            "status",
        )
        export_order = fields

    def service_data(self, instance) -> dict:
        data = super().service_data(instance)
        for text in ("license_plate", "owner", "garaging_address"):
            data[text] = data[text] or ""
        return data
