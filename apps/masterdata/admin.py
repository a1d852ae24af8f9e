"""The back-office of master data. Insurers are registered by apps.compliance.admin: a new
AM Best rating is a compliance event, and master data sits below the apps that use it."""

from django.contrib import admin

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


@admin.register(Make, DriverType, LicenseType, ClientType)
class NamedAdmin(admin.ModelAdmin):
    list_display = ["name"]
    search_fields = ["name"]
