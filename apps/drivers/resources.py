"""A fleet's driver list as a file: the columns staff import and export (see
apps.core.admin_import for the rules every row goes through)."""

from __future__ import annotations

from import_export import widgets

from apps.clients.resources import ClientByDotWidget
from apps.core.admin_import import (
    ChoiceWidget,
    DayWidget,
    LookupWidget,
    ServiceResource,
    TextWidget,
    cell_text,
    column,
)
from apps.drivers.choices import DriverStatus
from apps.drivers.models import Driver
from apps.drivers.services import DRIVER_FIELDS, driver_create, driver_fields_check
from apps.masterdata.models import City, DriverType, LicenseType, State


class CityWidget(widgets.Widget):
    """A city within the row's state (cities are looked up within their state), each city
    named in the file looked up once per import: a driver list names a few cities many times,
    and a query per row was most of what the import itself added to the service's time."""

    def __init__(self, states: LookupWidget):
        super().__init__()
        self.states = states
        self._cities: dict[tuple[int, str], City | None] = {}

    def reset(self) -> None:
        self._cities = {}

    def clean(self, value, row=None, **kwargs):
        name = cell_text(value)
        if not name:
            return None
        state = self.states.clean((row or {}).get("state"))
        if state is None:
            raise ValueError(f"The city “{name}” needs its state in the state column.")
        key = (state.pk, name.lower())
        if key not in self._cities:
            self._cities[key] = City.objects.filter(state=state, name_key=key[1]).first()
        city = self._cities[key]
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
    fields_check = staticmethod(driver_fields_check)
    service_fields = DRIVER_FIELDS
    error_fields = {"client_id": "client"}
    required_columns = ("dot", "first_name", "last_name", "driver_type")

    dot = column("dot", ClientByDotWidget(), attribute="client")
    first_name = column("first_name", TextWidget())
    last_name = column("last_name", TextWidget())
    driver_type = column("driver_type", LookupWidget("driver type", DriverType))
    date_of_birth = column("date_of_birth", DayWidget())
    hire_date = column("hire_date", DayWidget())
    license_number = column("license_number", TextWidget())
    license_state = column(
        "license_state", LookupWidget("state", State, codes=True, render_attr="code")
    )
    license_expiration_date = column("license_expiration_date", DayWidget())
    license_type = column(
        "license_type", LookupWidget("license type", LicenseType), attribute="dl_type"
    )
    address = column("address", TextWidget())
    city = column("city", TextWidget())
    state = column("state", TextWidget())
    zip_code = column("zip_code", TextWidget())
    phone = column("phone", TextWidget())
    email = column("email", TextWidget())
    status = column("status", ChoiceWidget("status", DriverStatus.choices, DriverStatus.ACTIVE))

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
