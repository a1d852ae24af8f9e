"""A fleet's driver list as a file: the columns staff import and export (see
apps.core.admin_import for the rules every row goes through)."""

from __future__ import annotations

from import_export import fields, widgets

from apps.core.admin_import import (
    ChoiceWidget,
    ClientByDotWidget,
    DayWidget,
    LookupWidget,
    ServiceResource,
    TextWidget,
    _text,
)
from apps.drivers.choices import DriverStatus
from apps.drivers.models import Driver
from apps.drivers.services import DRIVER_FIELDS, driver_create
from apps.masterdata.models import City, DriverType, LicenseType, State

TEXT = ("first_name", "last_name", "license_number", "address", "zip_code", "phone", "email")


class CityWidget(widgets.Widget):
    """A city within the row's state (cities are looked up within their state)."""

    def __init__(self, states: LookupWidget):
        super().__init__()
        self.states = states

    def clean(self, value, row=None, **kwargs):
        name = _text(value)
        if not name:
            return None
        state = self.states.clean((row or {}).get("state"))
        if state is None:
            raise ValueError(f"The city “{name}” needs its state in the state column.")
        city = City.objects.filter(state=state, name_key=name.lower()).first()
        if city is None:
            raise ValueError(f"Unknown city “{name}” in {state.code}.")
        return city

    def render(self, value, obj=None, **kwargs):
        return "" if value is None else value.name


class DriverResource(ServiceResource):
    """Columns: dot, first_name, last_name, driver_type, date_of_birth, hire_date,
    license_number, license_state, license_expiration_date, license_type, address, city,
    state, zip_code, phone, email, status."""

    service = staticmethod(driver_create)
    service_fields = DRIVER_FIELDS
    error_fields = {"client_id": "client"}
    required_columns = ("dot", "first_name", "last_name", "driver_type")

    dot = fields.Field(attribute="client", column_name="dot", widget=ClientByDotWidget())
    first_name = fields.Field(attribute="first_name", column_name="first_name", widget=TextWidget())
    last_name = fields.Field(attribute="last_name", column_name="last_name", widget=TextWidget())
    driver_type = fields.Field(
        attribute="driver_type",
        column_name="driver_type",
        widget=LookupWidget("driver type", DriverType),
    )
    date_of_birth = fields.Field(
        attribute="date_of_birth", column_name="date_of_birth", widget=DayWidget()
    )
    hire_date = fields.Field(attribute="hire_date", column_name="hire_date", widget=DayWidget())
    license_number = fields.Field(
        attribute="license_number", column_name="license_number", widget=TextWidget()
    )
    license_state = fields.Field(
        attribute="license_state",
        column_name="license_state",
        widget=LookupWidget("state", State, codes=True, render_attr="code"),
    )
    license_expiration_date = fields.Field(
        attribute="license_expiration_date",
        column_name="license_expiration_date",
        widget=DayWidget(),
    )
    license_type = fields.Field(
        attribute="dl_type",
        column_name="license_type",
        widget=LookupWidget("license type", LicenseType),
    )
    address = fields.Field(attribute="address", column_name="address", widget=TextWidget())
    city = fields.Field(attribute="city", column_name="city", widget=TextWidget())
    state = fields.Field(attribute="state", column_name="state", widget=TextWidget())
    zip_code = fields.Field(attribute="zip_code", column_name="zip_code", widget=TextWidget())
    phone = fields.Field(attribute="phone", column_name="phone", widget=TextWidget())
    email = fields.Field(attribute="email", column_name="email", widget=TextWidget())
    status = fields.Field(
        attribute="status",
        column_name="status",
        widget=ChoiceWidget("status", DriverStatus.choices, DriverStatus.ACTIVE),
    )

    class Meta(ServiceResource.Meta):
        model = Driver
        fields = (
            "dot",
            "first_name",
            "last_name",
            "driver_type",
            "date_of_birth",
            "hire_date",
            "license_number",
            "license_state",
            "license_expiration_date",
            "license_type",
            "address",
            "city",
            "state",
            "zip_code",
            "phone",
            "email",
            "status",
        )
        export_order = fields

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        states = LookupWidget("state", State, codes=True, render_attr="code")
        self.fields["state"].widget = states
        self.fields["city"].widget = CityWidget(states)

    def service_data(self, instance) -> dict:
        data = super().service_data(instance)
        for text in TEXT:
            data[text] = data[text] or ""
        return data
