from django.contrib import admin

from apps.core.admin import ScopedHistoryAdmin
from apps.core.admin_display import (
    CoverageStatusFilter,
    DriverCoverageStatusFilter,
    coverage_status_label,
)
from apps.coverages.models import CoverageEvent, DriverCoverage, VehicleCoverage


class CoverageEventInline(admin.TabularInline):
    model = CoverageEvent
    fk_name = "vehicle_coverage"
    extra = 0
    can_delete = False
    fields = [
        "status",
        "effective_date",
        "policy_added_date",
        "policy_removed_date",
        "created_at",
        "created_by",
    ]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="coverage status")
    def status(self, obj) -> str:
        return coverage_status_label(obj.coverage_status)


class DriverCoverageEventInline(CoverageEventInline):
    fk_name = "driver_coverage"


@admin.register(VehicleCoverage)
class VehicleCoverageAdmin(ScopedHistoryAdmin):
    list_display = [
        "vehicle",
        "policy",
        "status",
        "policy_added_date",
        "policy_removed_date",
    ]
    list_filter = [CoverageStatusFilter, "policy__coverage_type", "policy_added_date"]
    search_fields = ["vehicle__serial_number", "vehicle__unit", "policy__policy_number"]
    list_select_related = ["vehicle", "policy", "policy__coverage_type"]
    autocomplete_fields = ["vehicle", "policy"]
    inlines = [CoverageEventInline]

    @admin.display(description="coverage status", ordering="coverage_status")
    def status(self, obj) -> str:
        return coverage_status_label(obj.coverage_status)


@admin.register(DriverCoverage)
class DriverCoverageAdmin(ScopedHistoryAdmin):
    list_display = [
        "driver",
        "policy",
        "status",
        "policy_added_date",
        "policy_removed_date",
    ]
    list_filter = [DriverCoverageStatusFilter, "policy__coverage_type"]
    search_fields = ["driver__last_name", "driver__license_number", "policy__policy_number"]
    list_select_related = ["driver", "policy", "policy__coverage_type"]
    autocomplete_fields = ["driver", "policy"]
    inlines = [DriverCoverageEventInline]

    @admin.display(description="coverage status", ordering="coverage_status")
    def status(self, obj) -> str:
        return coverage_status_label(obj.coverage_status)
