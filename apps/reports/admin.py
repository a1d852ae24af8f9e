from django.contrib import admin

from apps.core.admin import AgencyScopedAdmin
from apps.reports.models import PolicyPremiumReport
from apps.reports.services import premium_report_snapshot


@admin.register(PolicyPremiumReport)
class PolicyPremiumReportAdmin(AgencyScopedAdmin):
    list_display = [
        "id",
        "policy",
        "client",
        "period_start",
        "period_end",
        "has_snapshot",
        "snapshot_at",
        "created_at",
        "created_by",
    ]
    list_filter = ["period_start", ("snapshot_at", admin.EmptyFieldListFilter)]
    search_fields = ["policy__policy_number", "policy__client__client_name", "policy__client__dot"]
    list_select_related = ["policy", "policy__coverage_type", "policy__client", "created_by"]
    autocomplete_fields = ["policy"]
    readonly_fields = ["snapshot_at", "created_at", "created_by"]
    actions = ["freeze_snapshot"]

    @admin.display(description="client")
    def client(self, obj):
        return obj.policy.client

    @admin.display(boolean=True, description="snapshot")
    def has_snapshot(self, obj) -> bool:
        return obj.snapshot_at is not None

    @admin.action(description="Freeze a snapshot of the selected reports")
    def freeze_snapshot(self, request, queryset):
        for report in queryset:
            premium_report_snapshot(report=report)
        self.message_user(request, f"Froze {queryset.count()} report(s).")

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
