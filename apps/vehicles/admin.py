from django.contrib import admin
from django.db.models import Count

from apps.certificates.admin_actions import download_vehicle_certificates
from apps.core.admin import AgencyScopedAdmin
from apps.vehicles.models import Lienholder, Vehicle


@admin.register(Vehicle)
class VehicleAdmin(AgencyScopedAdmin):
    list_display = [
        "unit",
        "serial_number",
        "license_plate",
        "make",
        "model_year",
        "unit_type",
        "client",
        "stated_value",
        "status",
    ]
    list_filter = ["status", "unit_type", "make", "deleted", "client__agency"]
    search_fields = ["serial_number", "license_plate", "unit", "client__client_name", "client__dot"]
    list_select_related = ["make", "unit_type", "client"]
    autocomplete_fields = ["client", "lienholder", "license_plate_state"]
    readonly_fields = ["created_at", "updated_at", "created_by", "updated_by"]
    actions = [download_vehicle_certificates]


@admin.register(Lienholder)
class LienholderAdmin(AgencyScopedAdmin):
    list_display = ["name", "agency", "phone", "vehicle_count"]
    list_filter = ["agency"]
    search_fields = ["name", "phone"]
    list_select_related = ["agency"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(vehicle_count=Count("vehicles"))

    @admin.display(ordering="vehicle_count", description="vehicles")
    def vehicle_count(self, obj):
        return obj.vehicle_count
