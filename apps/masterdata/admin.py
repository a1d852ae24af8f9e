"""The back-office of master data, written through apps.masterdata.services: a name's key and
its uniqueness are checked there (a message on the form, never a database error), and a row
that records name is never deleted. Insurers are registered by apps.compliance.admin: a new AM
Best rating is a compliance event, and master data sits below the apps that use it."""

from django.contrib import admin

from apps.core.admin import ReadOnlyAdminMixin, ServiceFormAdmin
from apps.masterdata.models import (
    City,
    ClientType,
    CoverageType,
    DriverType,
    LicenseType,
    Make,
    State,
    UnitType,
)
from apps.masterdata.services import masterdata_create, masterdata_delete, masterdata_update


class MasterDataAdmin(ServiceFormAdmin):
    """A reference list: `service_fields` are the form's fields, passed as they are; a new row
    is `masterdata_create` of the admin's model."""

    update_service = staticmethod(masterdata_update)
    delete_service = staticmethod(masterdata_delete)

    def service_save(self, request, instance, cleaned_data: dict, change: bool):
        if change:
            return super().service_save(request, instance, cleaned_data, change)
        data = {name: cleaned_data[name] for name in self.service_fields if name in cleaned_data}
        return masterdata_create(user=request.user, model=self.model, **data)


@admin.register(State)
class StateAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Read-only: the USPS list (states, DC, territories) that load_masterdata keeps; writes
    and lookups name a state by its USPS code, and its cities go with it."""

    list_display = ["name", "code", "is_territory"]
    list_filter = ["is_territory"]
    search_fields = ["name", "code"]


@admin.register(City)
class CityAdmin(MasterDataAdmin):
    service_fields = ("name", "state")
    list_display = ["name", "state"]
    list_filter = ["state"]
    search_fields = ["name", "state__code"]
    list_select_related = ["state"]
    autocomplete_fields = ["state"]


@admin.register(UnitType)
class UnitTypeAdmin(MasterDataAdmin):
    service_fields = ("name", "is_power_unit")
    list_display = ["name", "is_power_unit"]
    list_filter = ["is_power_unit"]
    search_fields = ["name"]


@admin.register(CoverageType)
class CoverageTypeAdmin(MasterDataAdmin):
    """A line's code is what requirement rules, certificates and the federal minimums name
    (AL, GL, MTC…): set once, when the line is added."""

    service_fields = ("code", "name", "schedules_units", "schedules_drivers")
    list_display = ["code", "name", "schedules_units", "schedules_drivers"]
    list_filter = ["schedules_units", "schedules_drivers"]
    search_fields = ["code", "name"]

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "code"] if obj is not None else fields


@admin.register(Make, DriverType, LicenseType, ClientType)
class NamedAdmin(MasterDataAdmin):
    service_fields = ("name",)
    list_display = ["name"]
    search_fields = ["name"]
