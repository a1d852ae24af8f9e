from django.contrib import admin

from apps.core.admin import ScopedHistoryAdmin, ServiceFormAdmin, ServiceInline
from apps.core.admin_display import (
    AutocompleteFilter,
    AutocompleteFilterMedia,
    CoveragePeriodInline,
    DropdownFilter,
    field_column,
)
from apps.core.admin_import import StaffImportExportMixin
from apps.coverages.models import DriverCoverage
from apps.drivers.models import Driver, DriverVehicle
from apps.drivers.resources import DriverResource
from apps.drivers.services import (
    DRIVER_FIELDS,
    driver_create,
    driver_update,
    driver_vehicle_link,
)


class DriverVehicleInline(ServiceInline):
    """Vehicles this driver drives; a new link goes through driver_vehicle_link (same client,
    once per pair): its unit box offers the driver's client's units."""

    model = DriverVehicle
    autocomplete_fields = ["vehicle"]
    of_parents_client = ("vehicle",)
    fields = ["vehicle", "created_at", "created_by"]
    readonly_fields = ["created_at", "created_by"]

    def service_create(self, request, parent, cleaned_data):
        return driver_vehicle_link(
            user=request.user,
            vehicle_id=cleaned_data["vehicle"].pk,
            driver_id=parent.pk,
        )


class DriverCoverageInline(CoveragePeriodInline):
    model = DriverCoverage
    verbose_name_plural = "OA / DD coverage"
    select_related = ("policy", "policy__coverage_type")


@admin.register(Driver)
class DriverAdmin(
    AutocompleteFilterMedia, StaffImportExportMixin, ScopedHistoryAdmin, ServiceFormAdmin
):
    resource_classes = [DriverResource]
    create_service = staticmethod(driver_create)
    update_service = staticmethod(driver_update)
    service_fields = DRIVER_FIELDS
    service_relations = ("client",)
    list_display = [
        "last_name",
        "first_name",
        "carrier",
        "driver_type",
        "license_number",
        "license_state",
        "status",
    ]
    list_filter = [
        "status",
        "driver_type",
        "dl_type",
        ("client", AutocompleteFilter),
        ("client__agency", DropdownFilter),
    ]
    search_fields = ["last_name", "first_name", "license_number", "client__client_name"]
    list_select_related = ["client", "driver_type", "license_state"]
    autocomplete_fields = ["client", "state", "city", "license_state"]
    readonly_fields = ["created_at", "updated_at", "created_by", "updated_by"]
    inlines = [DriverVehicleInline, DriverCoverageInline]

    carrier = field_column("client__client_name", "client")
