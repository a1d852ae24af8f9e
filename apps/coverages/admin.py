from django.contrib import admin
from django.core.exceptions import ValidationError

from apps.core.admin import NamedRowsInline, ScopedHistoryAdmin, ServiceFormAdmin, in_staff_words
from apps.core.admin_display import (
    CoverageStatusFilter,
    DriverCoverageStatusFilter,
    coverage_status_label,
)
from apps.core.admin_people import WhoColumnsMixin
from apps.coverages.models import LATEST_FIRST, CoverageEvent, DriverCoverage, VehicleCoverage
from apps.coverages.services import (
    DRIVER,
    SCHEDULE_AGAIN,
    VEHICLE,
    Subject,
    coverage_assign,
    coverage_update,
)


class CoverageEventInline(WhoColumnsMixin, NamedRowsInline):
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


class CoverageAdmin(ScopedHistoryAdmin, ServiceFormAdmin):
    """A scheduling period, written only through coverage_assign / coverage_update, so every
    change is appended to its event log (and announced) as the API's are.

    Adding schedules a unit or driver; on the pair's latest period the status and dates can
    change (remove 1, decline 2, or move the added date); earlier periods are history.
    """

    subject: Subject
    client_path = "policy__client"  # a scheduling write locks the policy's client first
    # How staff schedule an ended period's unit or driver again, where the API says "with
    # POST" (`SCHEDULE_AGAIN`).
    schedule_again: str
    # Subclasses put the unit or the driver first.
    list_display = ["policy", "status", "policy_added_date", "policy_removed_date"]
    list_select_related = ["policy", "policy__coverage_type"]

    @admin.display(description="coverage status", ordering="coverage_status")
    def status(self, obj) -> str:
        return coverage_status_label(obj.coverage_status)

    def get_fields(self, request, obj=None):
        field = self.subject.field
        if obj is None:
            return [field, "policy", "policy_added_date"]
        return [field, "policy", "coverage_status", "policy_added_date", "policy_removed_date"]

    def get_readonly_fields(self, request, obj=None):
        return [self.subject.field, "policy"] if obj is not None else []

    def formfield_for_choice_field(self, db_field, request, **kwargs):
        # Only the statuses this kind of period takes (a unit is never 7, a driver never 4):
        # the others were offered and then refused by the service.
        if db_field.name == "coverage_status":
            allowed = self.subject.allowed_statuses
            kwargs["choices"] = [(v, label) for v, label in db_field.choices if v in allowed]
        return super().formfield_for_choice_field(db_field, request, **kwargs)

    def has_change_permission(self, request, obj=None):
        if obj is not None and not self._is_latest(obj):
            return False
        return super().has_change_permission(request, obj)

    def _is_latest(self, obj) -> bool:
        field = self.subject.field
        latest = (
            type(obj)
            .objects.filter(**{field: getattr(obj, f"{field}_id")}, policy_id=obj.policy_id)
            .order_by(*LATEST_FIRST)
            .values_list("pk", flat=True)
            .first()
        )
        return latest == obj.pk

    def service_save(self, request, instance, cleaned_data, change):
        field = self.subject.field
        if not change:
            target = cleaned_data[field]
            return coverage_assign(
                user=request.user,
                subject=self.subject,
                target_id=target.pk if target else None,
                policy_id=cleaned_data["policy"].pk if cleaned_data["policy"] else None,
                policy_added_date=cleaned_data.get("policy_added_date"),
            )
        try:
            return coverage_update(
                user=request.user,
                subject=self.subject,
                target_id=getattr(instance, f"{field}_id"),
                policy_id=instance.policy_id,
                coverage_status=cleaned_data["coverage_status"],
                policy_added_date=cleaned_data.get("policy_added_date"),
                policy_removed_date=cleaned_data.get("policy_removed_date"),
            )
        except ValidationError as refused:
            raise in_staff_words(refused, SCHEDULE_AGAIN, how=self.schedule_again) from refused


@admin.register(VehicleCoverage)
class VehicleCoverageAdmin(CoverageAdmin):
    subject = VEHICLE
    schedule_again = "(Add vehicle coverage, or the vehicles' Assign action)"
    list_display = ["vehicle", *CoverageAdmin.list_display]
    list_filter = [CoverageStatusFilter, "policy__coverage_type", "policy_added_date"]
    search_fields = ["vehicle__serial_number", "vehicle__unit", "policy__policy_number"]
    list_select_related = ["vehicle", *CoverageAdmin.list_select_related]
    autocomplete_fields = ["vehicle", "policy"]
    inlines = [CoverageEventInline]


@admin.register(DriverCoverage)
class DriverCoverageAdmin(CoverageAdmin):
    subject = DRIVER
    schedule_again = "(Add driver coverage)"
    list_display = ["driver", *CoverageAdmin.list_display]
    list_filter = [DriverCoverageStatusFilter, "policy__coverage_type"]
    search_fields = ["driver__last_name", "driver__license_number", "policy__policy_number"]
    list_select_related = ["driver", *CoverageAdmin.list_select_related]
    autocomplete_fields = ["driver", "policy"]
    inlines = [DriverCoverageEventInline]
