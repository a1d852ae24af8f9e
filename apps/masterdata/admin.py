from django.contrib import admin

from apps.masterdata.models import (
    City,
    ClientType,
    CoverageType,
    DriverType,
    Insurer,
    LicenseType,
    Make,
    State,
    UnitType,
)


@admin.register(State)
class StateAdmin(admin.ModelAdmin):
    list_display = ["name", "code", "is_territory"]
    list_filter = ["is_territory"]
    search_fields = ["name", "code"]


@admin.register(City)
class CityAdmin(admin.ModelAdmin):
    list_display = ["name", "state"]
    list_filter = ["state"]
    search_fields = ["name", "state__code"]
    list_select_related = ["state"]
    autocomplete_fields = ["state"]


@admin.register(UnitType)
class UnitTypeAdmin(admin.ModelAdmin):
    list_display = ["name", "is_power_unit"]
    list_filter = ["is_power_unit"]
    search_fields = ["name"]


@admin.register(CoverageType)
class CoverageTypeAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "schedules_units", "schedules_drivers"]
    list_filter = ["schedules_units", "schedules_drivers"]
    search_fields = ["code", "name"]


@admin.register(Insurer)
class InsurerAdmin(admin.ModelAdmin):
    list_display = ["name", "naic", "am_best_rating"]
    list_filter = ["am_best_rating"]
    list_editable = ["am_best_rating"]
    search_fields = ["name", "naic"]

    def save_model(self, request, obj, form, change):
        """A new AM Best rating can change the verdict of every client this insurer covers:
        watched profiles announce it (`compliance.changed`), from the form or the list."""
        from apps.compliance.monitoring import clients_insured_by, compliance_watch

        with compliance_watch(client_ids=clients_insured_by(obj.pk) if change else []):
            super().save_model(request, obj, form, change)


@admin.register(Make, DriverType, LicenseType, ClientType)
class NamedAdmin(admin.ModelAdmin):
    list_display = ["name"]
    search_fields = ["name"]
