from __future__ import annotations

import json

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.forms.fields import InvalidJSONInput
from rest_framework.exceptions import ParseError
from rest_framework.exceptions import ValidationError as ParsedBodyError

from apps.compliance.models import RequirementProfile
from apps.compliance.rules import rules_clean
from apps.compliance.selectors import profile_subscriptions
from apps.compliance.services import (
    insurer_update,
    requirement_profile_create,
    requirement_profile_delete,
    requirement_profile_update,
)
from apps.core.admin import ServiceFormAdmin
from apps.core.camel_case import camel, camel_key
from apps.core.parsers import json_data
from apps.masterdata.admin import MasterDataAdmin
from apps.masterdata.models import Insurer
from apps.webhooks.models import Webhook

RULES_HELP = (
    'A JSON list, e.g. [{"kind": "coverage", "coverageType": "AL", "minimumLimit": '
    '"1000000.00"}, {"kind": "insurer_rating", "minimum": "A-"}, {"kind": '
    '"additional_insured"}, {"kind": "expiration_notice", "days": 30}]. Kinds: coverage, '
    "insurer_rating, additional_insured, waiver_of_subrogation, expiration_notice, "
    "federal_minimum."
)


class RulesField(forms.JSONField):
    """A profile's rules as JSON text, read as the API reads a body (`json_data`: RFC 8259
    JSON, nesting bounded, no NUL or lone surrogate, camelCase or snake_case keys, a property
    given in both spellings refused) and shown as the API shows them (camelCase keys), so a
    rule the API refuses is refused here with the API's message."""

    def to_python(self, value):
        if self.disabled:
            return value
        if value in self.empty_values:
            return None
        try:
            return json_data(value)
        except ParseError as exc:
            raise ValidationError(str(exc.detail)) from None
        except ParsedBodyError as exc:  # keyed by the path in the rules, as sent
            raise ValidationError(
                [
                    _rule_error("rules" if key == "non_field_errors" else f"rules.{key}", message)
                    for key, messages in exc.detail.items()
                    for message in messages
                ]
            ) from None

    def bound_data(self, data, initial):
        # A refused form shows the rules as typed, to correct: nothing is lost or reworded.
        if self.disabled:
            return initial
        return None if data is None else InvalidJSONInput(data)

    def prepare_value(self, value):
        if isinstance(value, InvalidJSONInput):
            return value
        if isinstance(value, list):  # the stored rules: their keys as the API shows them
            value = [
                {camel_key(k): v for k, v in rule.items()} if isinstance(rule, dict) else rule
                for rule in value
            ]
        return json.dumps(value, ensure_ascii=False)


class RequirementProfileForm(forms.ModelForm):
    """The API's fields: the code is optional, as it is there (`requirement_profile_create`
    makes it from the name; on a change, blank keeps it)."""

    class Meta:
        model = RequirementProfile
        fields = ["agency", "name", "code", "rules"]
        field_classes = {"rules": RulesField}
        help_texts = {
            "code": "What `profile=` may name instead of the id; unique in the agency. "
            "Left blank, it is made from the name, as the API makes it.",
            "rules": RULES_HELP,
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "code" in self.fields:
            self.fields["code"].required = False

    def clean_rules(self):
        # Checked here by the rules' own validation (the one the service runs again), so a
        # rule's error shows with the other fields' errors, not only once they are all right.
        rules = self.cleaned_data["rules"]
        try:
            rules_clean(rules)
        except ValidationError as exc:
            raise ValidationError(
                [
                    _rule_error(key, message)
                    for key, messages in exc.message_dict.items()
                    for message in messages
                ]
            ) from None
        return rules


def _rule_error(key: str, message) -> str:
    """`rules.<index>.<property>` as staff count the rules, naming the property as the API
    does: "Rule 1, coverageType: ..." ("Rule 1: ..." for the rule as a whole)."""
    parts = key.split(".")
    if len(parts) > 1 and parts[1].isdigit():
        where = f"Rule {int(parts[1]) + 1}"
        if len(parts) > 2:
            where += f", {'.'.join(camel(part) for part in parts[2:])}"
        return f"{where}: {message}"
    return str(message)


@admin.register(RequirementProfile)
class RequirementProfileAdmin(ServiceFormAdmin):
    """Profiles are written through the same services as the API (rules validated once)."""

    form = RequirementProfileForm
    create_service = staticmethod(requirement_profile_create)
    update_service = staticmethod(requirement_profile_update)
    delete_service = staticmethod(requirement_profile_delete)
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

    def has_change_permission(self, request, obj=None):
        # The service refuses any change to a built-in profile: its page is view-only, with no
        # Save button that could only answer "cannot be changed".
        if obj is not None and obj.built_in:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.built_in:
            return False
        return super().has_delete_permission(request, obj)

    def get_deleted_objects(self, objs, request):
        """The subscriptions that name a profile keep it (the service refuses to delete it):
        listed as protected, so the confirmation page says so and offers no delete, as it
        does for a record a foreign key protects (a subscription names its profile by id)."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        subscriptions = profile_subscriptions(profile_ids=[obj.pk for obj in objs])
        protected = [
            *protected,
            *(f"{Webhook._meta.verbose_name.capitalize()}: {hook.url}" for hook in subscriptions),
        ]
        return deleted, counts, perms_needed, protected

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
