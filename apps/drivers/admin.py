from django.contrib import admin

from apps.core.admin import ReadOnlyInline, ScopedHistoryAdmin
from apps.coverages.models import DriverCoverage
from apps.drivers.models import Driver, DriverVehicle


class DriverVehicleInline(admin.TabularInline):
    model = DriverVehicle
    extra = 0
    autocomplete_fields = ["vehicle"]
    readonly_fields = ["created_at", "created_by"]


class DriverCoverageInline(ReadOnlyInline):
    model = DriverCoverage
    verbose_name_plural = "OA / DD coverage"
    fields = ["policy", "coverage_status", "policy_added_date", "policy_removed_date"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("policy", "policy__coverage_type")


@admin.register(Driver)
class DriverAdmin(ScopedHistoryAdmin):
    list_display = [
        "last_name",
        "first_name",
        "client",
        "driver_type",
        "license_number",
        "license_state",
        "status",
    ]
    list_filter = ["status", "driver_type", "dl_type", "client__agency"]
    search_fields = ["last_name", "first_name", "license_number", "client__client_name"]
    list_select_related = ["client", "driver_type", "license_state"]
    autocomplete_fields = ["client", "state", "city", "license_state"]
    readonly_fields = ["created_at", "updated_at", "created_by", "updated_by"]
    inlines = [DriverVehicleInline, DriverCoverageInline]
