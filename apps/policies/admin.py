from django.contrib import admin

from apps.core.admin import AgencyScopedAdmin
from apps.documents.admin import PolicyDocumentInline
from apps.policies.models import Policy, PolicyLimit, PolicyRate
from apps.policies.selectors import today


class PolicyLimitInline(admin.TabularInline):
    model = PolicyLimit
    extra = 0


class PolicyRateInline(admin.TabularInline):
    model = PolicyRate
    extra = 0


class StatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [(s, s.title()) for s in ("ACTIVE", "FUTURE", "EXPIRED", "CANCELLED")]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.with_status(today()).filter(status=self.value())
        return queryset


@admin.register(Policy)
class PolicyAdmin(AgencyScopedAdmin):
    list_display = [
        "policy_number",
        "client",
        "coverage_type",
        "insurer",
        "effective_date",
        "expiration_date",
        "status",
        "deleted",
    ]
    list_filter = [StatusFilter, "coverage_type", "insurer", "deleted", "effective_date"]
    search_fields = ["policy_number", "client__client_name", "client__dot"]
    list_select_related = ["client", "coverage_type", "insurer"]
    autocomplete_fields = ["client", "state"]
    readonly_fields = ["created_at", "updated_at", "created_by", "updated_by", "deleted_at"]
    inlines = [PolicyLimitInline, PolicyRateInline, PolicyDocumentInline]
    date_hierarchy = "effective_date"

    @admin.display(description="status")
    def status(self, obj: Policy) -> str:
        return obj.status_on(today())
