"""Back-office pages for webhook subscriptions and their delivery log, scoped by agency."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages

from apps.compliance.models import RequirementProfile
from apps.compliance.selectors import requirement_profile_queryset, requirement_profiles_named
from apps.core.admin import (
    AgencyScopedAdmin,
    PageRowsMixin,
    ReadOnlyAdminMixin,
    ServiceFormAdmin,
)
from apps.events.admin import EventTypeFilter
from apps.events.permissions import FEED_PERMISSIONS
from apps.webhooks.models import Webhook, WebhookDelivery
from apps.webhooks.services import (
    delivery_redeliver,
    webhook_create,
    webhook_rotate_secret,
    webhook_update,
)


class ProfileChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj) -> str:
        return f"{obj.name} ({obj.agency.name})"


class WebhookForm(forms.ModelForm):
    url = forms.URLField(max_length=2000, assume_scheme="https")
    # The API's `profileId`: a subscription names its profile by id (no foreign key), so the
    # choices are set per page by the admin (`WebhookAdmin.get_form`), as the staff may see.
    profile = ProfileChoiceField(
        queryset=RequirementProfile.objects.none(),
        required=False,
        help_text="The requirement profile whose verdicts it receives as compliance.changed "
        "(required when its event types name compliance.changed): one of the "
        "subscription's agency, its built-in federal minimum included.",
    )

    class Meta:
        model = Webhook
        fields = [
            "agency",
            "url",
            "event_types",
            "client_ids",
            "profile",
            "description",
            "active",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial.setdefault("profile", self.instance.profile_id)


class FeedPermissionMixin:
    """Subscriptions and their deliveries carry the change feed's events: their pages and
    actions need the feed's permission too, as the API's webhook endpoints do."""

    def _receives_feed(self, request) -> bool:
        return request.user.has_perms(FEED_PERMISSIONS)

    def has_module_permission(self, request):
        return self._receives_feed(request) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return self._receives_feed(request) and super().has_view_permission(request, obj)

    def has_add_permission(self, request):
        return self._receives_feed(request) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None):
        return self._receives_feed(request) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._receives_feed(request) and super().has_delete_permission(request, obj)


@admin.register(Webhook)
class WebhookAdmin(FeedPermissionMixin, PageRowsMixin, ServiceFormAdmin):
    """Subscriptions are written through the same services as the API (URL guard and profile
    check included); the secret is shown once, in the message after creating or rotating it."""

    form = WebhookForm
    create_service = staticmethod(webhook_create)
    update_service = staticmethod(webhook_update)
    service_fields = ("url", "event_types", "client_ids", "description", "active")
    # `agency` on the add form only (read-only once created); `profile` as `profile_id`.
    service_relations = ("agency", "profile")
    list_display = ["url", "agency", "active", "event_type_list", "profile", "created_at"]
    list_filter = ["active", "agency"]
    search_fields = ["url", "description"]
    list_select_related = ["agency"]
    readonly_fields = ["deactivated_reason", "created_at", "updated_at", "created_by"]
    actions = ["rotate_secret"]

    @admin.display(description="event types")
    def event_type_list(self, obj) -> str:
        return ", ".join(obj.event_types) or "all"

    def page_columns(self, rows: list) -> list:
        named = requirement_profiles_named(profile_ids=[row.profile_id for row in rows])
        for row in rows:
            row.profile_named = named.get(row.profile_id)
        return rows

    @admin.display(description="profile")
    def profile(self, obj) -> str:
        """The column, and the field of a page shown read-only."""
        if not hasattr(obj, "profile_named"):
            self.page_columns([obj])
        named = obj.profile_named
        return named.name if named is not None and named.agency_id == obj.agency_id else "-"

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "agency"] if obj is not None else fields

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change=change, **kwargs)
        # The profiles the API accepts as profileId: those of the subscription's agency
        # (the service checks the pair); on the add form, those of the staff's agencies.
        profiles = requirement_profile_queryset(user=request.user).order_by(
            "agency__name", "name", "id"
        )
        if obj is not None:
            profiles = profiles.filter(agency_id=obj.agency_id)

        class ProfileScopedForm(form_class):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                if "profile" in self.fields:
                    self.fields["profile"].queryset = profiles

        return ProfileScopedForm

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if not change:
            self.message_user(
                request, f"Signing secret (shown once): {obj.secret}", messages.WARNING
            )

    @admin.action(description="Rotate the signing secret", permissions=["change"])
    def rotate_secret(self, request, queryset):
        def rotate(webhook) -> None:
            rotated = webhook_rotate_secret(user=request.user, instance=webhook)
            self.message_user(
                request,
                # Not the URL first: the admin shows each message with a capital first letter.
                f"New secret (shown once) of {rotated.url}: {rotated.secret}",
                messages.WARNING,
            )

        self.run_service(request, queryset, rotate, "Rotated the secret of")


class DeliveryEventTypeFilter(EventTypeFilter):
    """By the delivered event's type, from the catalogue. Django's filter of the related
    column's values read them with a DISTINCT over every agency's events: it listed types only
    another agency's events have, and grew with the change feed on every view of the log."""

    parameter_name = "event__type"  # the name Django's filter gave it: links keep working
    type_field = "event__type"


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(FeedPermissionMixin, ReadOnlyAdminMixin, AgencyScopedAdmin):
    """The delivery log: read-only (the record of what was sent: nobody edits or deletes it),
    with a redeliver action."""

    list_display = [
        "id",
        "event_public_id",
        "event_type",
        "webhook",
        "status",
        "attempts",
        "response_status",
        "duration_ms",
        "last_attempt_at",
        "next_attempt_at",
    ]
    list_filter = ["status", DeliveryEventTypeFilter]
    search_fields = ["webhook__url", "error"]
    list_select_related = ["webhook", "event"]
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]
    actions = ["redeliver"]

    @admin.display(description="event", ordering="event_id")
    def event_public_id(self, obj) -> str:
        return obj.event.public_id

    @admin.display(description="type", ordering="event__type")
    def event_type(self, obj) -> str:
        return obj.event.type

    def has_view_permission(self, request, obj=None):
        # The log is the subscriptions' (`view_webhook`), with the feed's permission.
        return self._receives_feed(request) and (
            request.user.has_perm("webhooks.view_webhook")
            or super().has_view_permission(request, obj)
        )

    def has_redeliver_permission(self, request) -> bool:
        # Who may manage the hook.
        return self._receives_feed(request) and request.user.has_perm("webhooks.change_webhook")

    @admin.action(description="Deliver again now", permissions=["redeliver"])
    def redeliver(self, request, queryset):
        self.run_service(
            request,
            queryset,
            lambda d: delivery_redeliver(user=request.user, delivery=d),
            "Queued",
        )
