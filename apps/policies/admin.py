from django.contrib import admin
from django.utils.html import format_html

from apps.core.admin import (
    ScopedHistoryAdmin,
    ServiceCollectionInline,
    ServiceFormAdmin,
    SoftDeleteAdmin,
)
from apps.core.admin_display import (
    AutocompleteFilter,
    AutocompleteFilterMedia,
    CoveragePeriodInline,
    DeletedColumnMixin,
    DeletedFilter,
    DropdownFilter,
    field_column,
)
from apps.core.dates import today, us_text
from apps.coverages.models import DriverCoverage, VehicleCoverage
from apps.documents.admin import PolicyDocumentInline
from apps.policies.models import Policy, PolicyLimit, PolicyRate
from apps.policies.services import POLICY_FIELDS, RATE_FIELDS, policy_create, policy_update


class PolicyLimitInline(ServiceCollectionInline):
    """The limits, replaced as a whole through policy_update."""

    model = PolicyLimit
    fields = ["name", "amount", "position"]
    show_change_link = False
    update_service = staticmethod(policy_update)

    def service_changes(self, rows):
        ordered = sorted(rows, key=lambda row: row.get("position") or 0)
        return {"limits": [{"name": row["name"], "amount": row["amount"]} for row in ordered]}


class PolicyRateInline(ServiceCollectionInline):
    """The rating per unit type, replaced as a whole through policy_update."""

    model = PolicyRate
    fields = ["unit_type", *RATE_FIELDS]
    show_change_link = False
    update_service = staticmethod(policy_update)

    def service_changes(self, rows):
        fields = ("unit_type", *RATE_FIELDS)
        return {"rates": [{field: row.get(field) for field in fields} for row in rows]}


class ScheduledUnitInline(CoveragePeriodInline):
    model = VehicleCoverage
    verbose_name_plural = "scheduled units"
    fields = ["vehicle", "status", "policy_added_date", "policy_removed_date"]
    # Each row is named "<vehicle> on <policy>": the policy and its type come joined.
    select_related = ("vehicle", "policy__coverage_type")


class ScheduledDriverInline(CoveragePeriodInline):
    model = DriverCoverage
    verbose_name_plural = "scheduled drivers"
    fields = ["driver", "status", "policy_added_date", "policy_removed_date"]
    # Each row is named "<driver> on <policy>": the policy and its type come joined.
    select_related = ("driver", "policy__coverage_type")


class StatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [(s, s.title()) for s in ("ACTIVE", "FUTURE", "EXPIRED", "CANCELLED")]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(status=self.value())
        return queryset


class ExpiringFilter(admin.SimpleListFilter):
    title = "expiring"
    parameter_name = "expiring"

    def lookups(self, request, model_admin):
        return [("30", "In force, expiring within 30 days"), ("60", "… within 60 days")]

    def queryset(self, request, queryset):
        if self.value() in ("30", "60"):
            return queryset.expiring_within(today(), int(self.value()))
        return queryset


@admin.register(Policy)
class PolicyAdmin(
    AutocompleteFilterMedia,
    DeletedColumnMixin,
    ScopedHistoryAdmin,
    SoftDeleteAdmin,
    ServiceFormAdmin,
):
    create_service = staticmethod(policy_create)
    update_service = staticmethod(policy_update)
    service_fields = (*POLICY_FIELDS, "deleted")
    service_relations = ("client", "producer")
    list_display = [
        "policy_number",
        "carrier",
        "type_code",
        "insurer",
        "term",
        "status",
        "deleted",
    ]
    list_filter = [
        StatusFilter,
        ExpiringFilter,
        DeletedFilter,
        "coverage_type",
        ("insurer", DropdownFilter),
        ("client", AutocompleteFilter),
    ]
    search_fields = ["policy_number", "client__client_name", "client__dot"]
    list_select_related = ["client", "coverage_type", "insurer"]
    autocomplete_fields = ["client", "state"]
    readonly_fields = ["created_at", "updated_at", "created_by", "updated_by", "deleted_at"]
    inlines = [
        PolicyLimitInline,
        PolicyRateInline,
        ScheduledUnitInline,
        ScheduledDriverInline,
        PolicyDocumentInline,
    ]
    date_hierarchy = "effective_date"

    def get_queryset(self, request):
        return super().get_queryset(request).with_status(today())

    carrier = field_column("client__client_name", "client")

    @admin.display(ordering="coverage_type__code", description="type")
    def type_code(self, obj: Policy):
        return format_html(
            '<abbr title="{}">{}</abbr>', obj.coverage_type.name, obj.coverage_type.code
        )

    @admin.display(ordering="effective_date", description="term")
    def term(self, obj: Policy) -> str:
        return f"{us_text(obj.effective_date, '/')} to {us_text(obj.expiration_date, '/')}"

    status = field_column("status", "status")
