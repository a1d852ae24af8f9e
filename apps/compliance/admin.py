from __future__ import annotations

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied

from apps.compliance.models import RequirementProfile
from apps.compliance.services import (
    insurer_update,
    requirement_profile_create,
    requirement_profile_delete,
    requirement_profile_update,
)
from apps.core.admin import ServiceFormAdmin
from apps.masterdata.admin import MasterDataAdmin
from apps.masterdata.models import Insurer

RULES_HELP = (
    'A JSON list, e.g. [{"kind": "coverage", "coverageType": "AL", "minimumLimit": '
    '"1000000.00"}, {"kind": "insurer_rating", "minimum": "A-"}, {"kind": '
    '"additional_insured"}, {"kind": "expiration_notice", "days": 30}]. Kinds: coverage, '
    "insurer_rating, additional_insured, waiver_of_subrogation, expiration_notice, "
    "federal_minimum."
)


class RequirementProfileForm(forms.ModelForm):
    class Meta:
        model = RequirementProfile
        fields = ["agency", "name", "code", "rules"]
        help_texts = {"rules": RULES_HELP}


@admin.register(RequirementProfile)
class RequirementProfileAdmin(ServiceFormAdmin):
    """Profiles are written through the same services as the API (rules validated once)."""

    form = RequirementProfileForm
    create_service = staticmethod(requirement_profile_create)
    update_service = staticmethod(requirement_profile_update)
    service_fields = ("name", "code", "rules")
    service_relations = ("agency",)  # on the add form only: read-only once created
    list_display = ["name", "code", "agency", "rule_count", "kinds", "built_in", "updated_at"]
    list_filter = ["built_in", "agency"]
    search_fields = ["name", "code"]
    list_select_related = ["agency"]
    readonly_fields = ["built_in", "created_at", "updated_at", "created_by", "updated_by"]

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            fields.append("agency")
            if obj.built_in:
                fields += ["name", "code", "rules"]
        return fields

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.built_in:
            return False
        return super().has_delete_permission(request, obj)

    def delete_model(self, request, obj):
        if obj.built_in:
            raise PermissionDenied
        requirement_profile_delete(user=request.user, instance=obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset.exclude(built_in=True):
            requirement_profile_delete(user=request.user, instance=obj)

    @admin.display(description="rules")
    def rule_count(self, obj):
        return len(obj.rules)

    @admin.display(description="kinds")
    def kinds(self, obj):
        return ", ".join(
            r.get("coverage_type", r["kind"]) if r["kind"] == "coverage" else r["kind"]
            for r in obj.rules
        )


@admin.register(Insurer)
class InsurerAdmin(MasterDataAdmin):
    """Master data, registered here rather than in apps.masterdata: its AM Best rating is read
    by the compliance rules, and master data imports no app above it. A change, from the form
    or the list, goes through `insurer_update`, which announces the verdicts it moves."""

    update_service = staticmethod(insurer_update)
    service_fields = ("name", "naic", "address", "am_best_rating")
    list_display = ["name", "naic", "am_best_rating"]
    list_filter = ["am_best_rating"]
    list_editable = ["am_best_rating"]
    search_fields = ["name", "naic"]
