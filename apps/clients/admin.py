from django.contrib import admin
from django.db.models import Exists, OuterRef

from apps.certificates.admin_actions import download_client_certificates
from apps.clients.models import Client
from apps.clients.services import CLIENT_FIELDS, client_create, client_update
from apps.core.admin import (
    FirstRowsFormSet,
    PageRowsMixin,
    ReadOnlyInline,
    ScopedHistoryAdmin,
    ServiceFormAdmin,
    SoftDeleteAdmin,
)
from apps.core.admin_display import (
    DeletedColumnMixin,
    DeletedFilter,
    DropdownFilter,
    OneClickCertificateMixin,
    PermittedColumnsMixin,
    YesNoFilter,
)
from apps.core.dates import today
from apps.coverages.permissions import (
    CLIENT_VERIFICATION_PERMISSIONS,
    VEHICLE_VERIFICATION_PERMISSIONS,
)
from apps.documents.admin import ClientDocumentInline
from apps.drivers.models import Driver
from apps.policies.models import Policy
from apps.policies.selectors import client_policy_counts
from apps.vehicles.admin import mark_covered_today
from apps.vehicles.models import Vehicle


class PolicyInline(ReadOnlyInline):
    model = Policy
    fields = [
        "policy_number",
        "coverage_type",
        "insurer",
        "effective_date",
        "expiration_date",
        "cancellation_date",
        "status",
    ]
    readonly_fields = fields
    verbose_name_plural = "policies (live; deleted ones are in the policy list)"

    def get_queryset(self, request):
        return super().get_queryset(request).live().select_related("coverage_type", "insurer")

    @admin.display(description="status")
    def status(self, obj):
        return obj.status_on(today())


class CoveredRowsFormSet(FirstRowsFormSet):
    """The units shown, each marked covered today or not."""

    def page_columns(self, rows: list) -> list:
        return mark_covered_today(rows)


class VehicleInline(PermittedColumnsMixin, ReadOnlyInline):
    model = Vehicle
    needs = {"covered_today": VEHICLE_VERIFICATION_PERMISSIONS}
    fields = [
        "unit",
        "serial_number",
        "license_plate",
        "make",
        "model_year",
        "unit_type",
        "status",
        "covered_today",
    ]
    readonly_fields = fields
    formset = CoveredRowsFormSet

    def get_queryset(self, request):
        return super().get_queryset(request).live().select_related("make", "unit_type")

    @admin.display(description="covered today")
    def covered_today(self, obj) -> str:
        return "Covered" if obj.covered_today else "NOT covered"


class DriverInline(ReadOnlyInline):
    model = Driver
    fields = ["last_name", "first_name", "driver_type", "license_number", "status"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("driver_type")


class InForceFilter(YesNoFilter):
    title = "in force today"
    parameter_name = "in_force"
    labels = ("In force", "Not in force")

    def condition(self):
        return Exists(Policy.objects.filter(client=OuterRef("pk")).in_force_on(today()))


@admin.register(Client)
class ClientAdmin(
    PermittedColumnsMixin,
    PageRowsMixin,
    OneClickCertificateMixin,
    DeletedColumnMixin,
    ScopedHistoryAdmin,
    SoftDeleteAdmin,
    ServiceFormAdmin,
):
    create_service = staticmethod(client_create)
    update_service = staticmethod(client_update)
    service_fields = (*CLIENT_FIELDS, "deleted")
    service_relations = ("agency", "producer", "parent_client")
    certificate_action = staticmethod(download_client_certificates)
    needs = {
        "live_policies": ("policies.view_policy",),
        "in_force": CLIENT_VERIFICATION_PERMISSIONS,
        InForceFilter: CLIENT_VERIFICATION_PERMISSIONS,
    }
    list_display = [
        "client_name",
        "dot",
        "agency",
        "producer",
        "live_policies",
        "in_force",
        "deleted",
    ]
    list_filter = [
        InForceFilter,
        DeletedFilter,
        "client_type",
        "acord_enabled",
        "cargo_class",
        ("agency", DropdownFilter),
        ("state", DropdownFilter),
    ]
    search_fields = ["client_name", "dot"]
    list_select_related = ["agency", "producer"]
    autocomplete_fields = ["parent_client", "state", "city", "mailing_state", "mailing_city"]
    readonly_fields = ["created_at", "updated_at", "created_by", "updated_by", "deleted_at"]
    actions = [download_client_certificates]
    inlines = [PolicyInline, VehicleInline, DriverInline, ClientDocumentInline]

    def get_queryset(self, request):
        return super().get_queryset(request).order_by("client_name", "id")

    def page_columns(self, rows: list) -> list:
        """Each client with its live policies and whether one is in force today, read for the
        page's clients only (`client_policy_counts`)."""
        counts = client_policy_counts([row.pk for row in rows], today())
        for row in rows:
            row.live_policy_count, row.in_force_today = counts.get(row.pk, (0, False))
        return rows

    @admin.display(description="live policies")
    def live_policies(self, obj) -> int:
        return obj.live_policy_count

    @admin.display(description="in force", boolean=True)
    def in_force(self, obj) -> bool:
        return obj.in_force_today
