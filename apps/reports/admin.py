from django import forms
from django.contrib import admin

from apps.core.admin import ServiceFormAdmin
from apps.reports.models import PolicyPremiumReport
from apps.reports.services import premium_report_create, premium_report_snapshot


class ReportAddForm(forms.ModelForm):
    """What the API takes: a policy and a month; the service derives the period's dates."""

    # Its format is the service's rule (parse_period), checked by the form's dry run.
    period = forms.CharField(required=False, help_text="YYYY-MM; empty means the current month.")
    snapshot_now = forms.BooleanField(required=False, help_text="Freeze the computed mapping now.")

    class Meta:
        model = PolicyPremiumReport
        fields = ["policy"]


@admin.register(PolicyPremiumReport)
class PolicyPremiumReportAdmin(ServiceFormAdmin):
    """Reports are created through premium_report_create and then only read or frozen."""

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
    # A report of a deleted policy is made (the service takes any policy the staff may see):
    # its box offers deleted policies too, where a scheduling's offers live ones only.
    takes_deleted = ("policy",)
    readonly_fields = ["snapshot_at", "created_at", "created_by"]
    actions = ["freeze_snapshot"]

    @admin.display(description="client")
    def client(self, obj):
        return obj.policy.client

    @admin.display(boolean=True, description="snapshot")
    def has_snapshot(self, obj) -> bool:
        return obj.snapshot_at is not None

    def has_freeze_permission(self, request) -> bool:
        # Freezing changes a stored report: change_policypremiumreport, the model permission
        # (this admin's has_change_permission is False because the form never edits a report).
        return request.user.has_perm("reports.change_policypremiumreport")

    @admin.action(description="Freeze a snapshot of the selected reports", permissions=["freeze"])
    def freeze_snapshot(self, request, queryset):
        self.run_service(
            request, queryset, lambda report: premium_report_snapshot(report=report), "Froze"
        )

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ReportAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["policy", "period", "snapshot_now"]
        return ["policy", "period_start", "period_end", "snapshot_at", "created_at", "created_by"]

    def has_change_permission(self, request, obj=None):
        return False  # a report is a record of a computation; freeze it with the action

    def service_save(self, request, instance, cleaned_data, change):
        return premium_report_create(
            user=request.user,
            policy=cleaned_data["policy"],
            period=cleaned_data.get("period") or None,
            snapshot=bool(cleaned_data.get("snapshot_now")),
        )
