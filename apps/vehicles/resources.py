"""A fleet's unit list as a file: the columns staff import and export (see
apps.core.admin_import for the rules every row goes through)."""

from __future__ import annotations

from import_export import widgets

from apps.clients.resources import ClientByDotWidget
from apps.core.admin_import import (
    ChoiceWidget,
    LookupWidget,
    MoneyWidget,
    ServiceResource,
    TextWidget,
    YearWidget,
    column,
)
from apps.core.identifiers import VIN_MESSAGE, is_vin, normalize_vin
from apps.masterdata.models import Make, State, UnitType
from apps.vehicles.choices import VehicleStatus
from apps.vehicles.models import Vehicle
from apps.vehicles.services import VEHICLE_FIELDS, vehicle_create, vehicle_fields_check


class VinWidget(widgets.Widget):
    def clean(self, value, row=None, **kwargs):
        vin = normalize_vin(str(value or ""))
        if not vin:
            raise ValueError("The VIN is missing.")
        if not is_vin(vin):
            raise ValueError(f"Bad VIN “{vin}”. {VIN_MESSAGE}")
        return vin

    def render(self, value, obj=None, **kwargs):
        return value or ""


class VehicleResource(ServiceResource):
    """Columns: dot, unit, vin, year, make, unit_type, plate, plate_state, owner,
    garaging_address, stated_value, status."""

    service = staticmethod(vehicle_create)
    fields_check = staticmethod(vehicle_fields_check)
    service_fields = VEHICLE_FIELDS
    error_fields = {"client_id": "client", "lienholder_id": "client"}
    required_columns = ("dot", "unit", "vin", "year", "make", "unit_type")

    dot = column("dot", ClientByDotWidget(), attribute="client")
    unit = column("unit", TextWidget())
    vin = column("vin", VinWidget(), attribute="serial_number")
    year = column("year", YearWidget(), attribute="model_year")
    make = column("make", LookupWidget("make", Make))
    unit_type = column("unit_type", LookupWidget("unit type", UnitType))
    plate = column("plate", TextWidget(), attribute="license_plate")
    plate_state = column(
        "plate_state",
        LookupWidget("state", State, codes=True, render_attr="code"),
        attribute="license_plate_state",
    )
    owner = column("owner", TextWidget())
    garaging_address = column("garaging_address", TextWidget())
    stated_value = column("stated_value", MoneyWidget())
    status = column("status", ChoiceWidget("status", VehicleStatus.choices, VehicleStatus.ACTIVE))

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
