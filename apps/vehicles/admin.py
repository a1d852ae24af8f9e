from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import AdminDateWidget
from django.db.models import Count
from django.template.response import TemplateResponse

from apps.certificates.admin_actions import download_vehicle_certificates
from apps.core.admin import (
    PageRowsMixin,
    ReadOnlyInline,
    ScopedHistoryAdmin,
    ServiceFormAdmin,
)
from apps.core.admin_display import (
    AutocompleteFilter,
    AutocompleteFilterMedia,
    DeletedColumnMixin,
    DeletedFilter,
    DropdownFilter,
    OneClickCertificateMixin,
    PermittedColumnsMixin,
    YesNoFilter,
    field_column,
)
from apps.core.admin_import import StaffImportExportMixin
from apps.core.date_forms import DateFormField
from apps.core.dates import DATE_FORMS, iso_text, today
from apps.coverages.permissions import VEHICLE_VERIFICATION_PERMISSIONS
from apps.coverages.selectors import covered_today_filter, covered_vehicle_ids
from apps.coverages.services import VEHICLE, coverage_assign
from apps.policies.models import Policy
from apps.vehicles.models import Lienholder, Vehicle
from apps.vehicles.resources import VehicleResource
from apps.vehicles.services import (
    VEHICLE_FIELDS,
    lienholder_create,
    lienholder_delete,
    lienholder_update,
    vehicle_create,
    vehicle_update,
)


class CoveredFilter(YesNoFilter):
    """Covered today or not, as verification answers (`covered_today_filter`): either way,
    among the units it finds, the live units of live clients, as the dashboard counts the
    lists it links to; a deleted unit or one of a deleted client is in neither."""

    title = "covered today"
    parameter_name = "covered"
    labels = ("Covered", "Not covered")

    def condition(self):
        return covered_today_filter(today())

    def filter(self, queryset, yes: bool):
        return super().filter(queryset.live("client"), yes)


def mark_covered_today(vehicles: list) -> list:
    """Each of these units marked `covered_today` or not, by one statement over them
    (`covered_vehicle_ids`): for the rows a page shows, whatever the size of the agency."""
    covered = covered_vehicle_ids([vehicle.pk for vehicle in vehicles], today())
    for vehicle in vehicles:
        vehicle.covered_today = vehicle.pk in covered
    return vehicles


class PolicyOfTheUnitsField(forms.ModelChoiceField):
    """A policy named as staff tell policies apart: its client, line, number and term
    ("Lone Star Freight — AL GWC-1 (2026-01-01 to 2027-01-01)", the term as the service's
    refusals write it), from the one query of the choices (client and line joined)."""

    def label_from_instance(self, obj: Policy) -> str:
        term = f"{iso_text(obj.effective_date)} to {iso_text(obj.ends_on)}"
        return f"{obj.client.client_name} — {obj} ({term})"


class AssignToPolicyForm(forms.Form):
    """The Assign action's form: a policy that may schedule the selected units, those of
    their clients only (the service refuses a policy of another client, so offering one only
    led to a refusal after the submit), and the added date."""

    policy = PolicyOfTheUnitsField(
        queryset=Policy.objects.none(),
        help_text="A policy of the selected vehicles' client, in force or starting later.",
    )
    policy_added_date = DateFormField(
        required=False,
        widget=AdminDateWidget,
        help_text=f"As {DATE_FORMS}. Required for an active policy; a future one uses its start.",
    )

    def __init__(self, *args, user, vehicles, **kwargs):
        super().__init__(*args, **kwargs)
        on = today()
        self.fields["policy"].queryset = (
            Policy.objects.for_user(user)
            .live()
            .not_ended_on(on)
            .filter(coverage_type__schedules_units=True)
            .filter(client_id__in=vehicles.values("client_id"))
            .select_related("client", "coverage_type")
            .order_by("client__client_name", "coverage_type__code", "policy_number", "pk")
        )


@admin.register(Vehicle)
class VehicleAdmin(
    PermittedColumnsMixin,
    PageRowsMixin,
    AutocompleteFilterMedia,
    StaffImportExportMixin,
    OneClickCertificateMixin,
    DeletedColumnMixin,
    ScopedHistoryAdmin,
    ServiceFormAdmin,
):
    certificate_action = staticmethod(download_vehicle_certificates)
    needs = {
        "covered": VEHICLE_VERIFICATION_PERMISSIONS,
        CoveredFilter: VEHICLE_VERIFICATION_PERMISSIONS,
    }
    create_service = staticmethod(vehicle_create)
    update_service = staticmethod(vehicle_update)
    service_fields = (*VEHICLE_FIELDS, "deleted")
    service_relations = ("client", "lienholder")
    resource_classes = [VehicleResource]
    list_display = [
        "unit",
        "serial_number",
        "plate",
        "year_make",
        "carrier",
        "covered",
        "status",
    ]
    list_filter = [
        CoveredFilter,
        DeletedFilter,
        "status",
        "unit_type",
        ("make", DropdownFilter),
        ("client", AutocompleteFilter),
        ("client__agency", DropdownFilter),
    ]
    search_fields = [
        "serial_number",
        "license_plate",
        "license_plate_key",
        "unit",
        "client__client_name",
        "client__dot",
    ]
    list_select_related = ["make", "unit_type", "client", "license_plate_state"]
    autocomplete_fields = ["client", "lienholder", "license_plate_state"]
    readonly_fields = ["created_at", "updated_at", "created_by", "updated_by"]
    actions = ["assign_to_policy", download_vehicle_certificates]

    def page_columns(self, rows: list) -> list:
        return mark_covered_today(rows)

    @admin.display(description="covered today", boolean=True)
    def covered(self, obj) -> bool:
        return obj.covered_today

    @admin.display(ordering="make_name", description="year / make")
    def year_make(self, obj) -> str:
        return f"{obj.model_year} {obj.make.name}"

    carrier = field_column("client__client_name", "client")

    @admin.display(ordering="license_plate", description="plate")
    def plate(self, obj) -> str:
        if not obj.license_plate:
            return "—"
        state = obj.license_plate_state.code if obj.license_plate_state_id else ""
        return f"{obj.license_plate} {state}".strip()

    # change_vehicle, as the API's coverage endpoint requires for the same service.
    @admin.action(description="Assign selected vehicles to a policy", permissions=["change"])
    def assign_to_policy(self, request, queryset):
        form = AssignToPolicyForm(
            request.POST if "apply" in request.POST else None,
            user=request.user,
            vehicles=queryset,
        )
        if "apply" in request.POST and form.is_valid():
            policy = form.cleaned_data["policy"]
            added = form.cleaned_data["policy_added_date"]
            self.run_service(
                request,
                queryset,
                lambda v: coverage_assign(
                    user=request.user,
                    subject=VEHICLE,
                    target_id=v.pk,
                    policy_id=policy.pk,
                    policy_added_date=added,
                ),
                f"Scheduled on {policy}:",
            )
            return None
        return _assign_page(request, self, queryset, form)


def _assign_page(request, model_admin, queryset, form):
    return TemplateResponse(
        request,
        "admin/vehicles/assign_to_policy.html",
        {
            **model_admin.admin_site.each_context(request),
            "title": "Assign vehicles to a policy",
            "vehicles": queryset.select_related("client"),
            "form": form,
            # The date widget's calendar: Django's admin script it needs, then the widget's.
            "media": forms.Media(js=["admin/js/core.js"]) + form.media,
            "opts": model_admin.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        },
    )


class LienholderVehicleInline(ReadOnlyInline):
    model = Vehicle
    fields = ["unit", "serial_number", "make", "model_year", "stated_value", "client"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("make", "client")


@admin.register(Lienholder)
class LienholderAdmin(ServiceFormAdmin):
    create_service = staticmethod(lienholder_create)
    update_service = staticmethod(lienholder_update)
    delete_service = staticmethod(lienholder_delete)
    service_fields = ("name", "phone", "address")
    service_relations = ("agency",)
    list_display = ["name", "agency", "phone", "vehicle_count"]
    list_filter = ["agency"]
    search_fields = ["name", "phone"]
    list_select_related = ["agency"]
    inlines = [LienholderVehicleInline]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(vehicle_count=Count("vehicles"))
            .order_by("name", "id")  # the count's GROUP BY drops Meta.ordering
        )

    vehicle_count = field_column("vehicle_count", "vehicles")
