"""Back-office page of the change events (read-only, scoped by agency)."""

from __future__ import annotations

from django.contrib import admin

from apps.core.admin import AgencyScopedAdmin, ReadOnlyAdminMixin
from apps.events.models import Event


@admin.register(Event)
class EventAdmin(ReadOnlyAdminMixin, AgencyScopedAdmin):
    list_display = ["public_id", "type", "agency", "client_id", "occurred_at"]
    list_filter = ["type", "agency"]
    search_fields = ["type", "=client_id"]
    list_select_related = ["agency"]
    readonly_fields = ["type", "agency", "client_id", "data", "occurred_at", "txid"]
    date_hierarchy = "occurred_at"

    # Whoever may read clients may read what happened to them, as on GET /v1/events.
    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("clients.view_client")

    def has_module_permission(self, request):
        return request.user.is_staff and request.user.has_perm("clients.view_client")
