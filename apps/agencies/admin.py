"""Agencies, producers and memberships in the back-office: written through their services."""

from django.contrib import admin
from django.db.models import Count

from apps.agencies.models import Agency, AgencyMembership, Producer
from apps.agencies.services import (
    agency_create,
    agency_delete,
    agency_update,
    membership_create,
    membership_delete,
    producer_create,
    producer_delete,
    producer_update,
)
from apps.core.admin import ServiceFormAdmin, ServiceInline
from apps.core.admin_display import field_column

PRODUCER_FIELDS = ("name", "contact_name", "address", "phone", "email")


class ProducerInline(ServiceInline):
    """New producers of the agency, added through producer_create."""

    model = Producer
    fields = PRODUCER_FIELDS
    show_change_link = True

    def service_create(self, request, parent, cleaned_data):
        fields = {name: cleaned_data[name] for name in PRODUCER_FIELDS if name in cleaned_data}
        return producer_create(user=request.user, agency_id=parent.pk, **fields)


class MembershipInline(ServiceInline):
    """Who may act for the agency; a new member is added through membership_create."""

    model = AgencyMembership
    fields = ["user", "created_at"]
    readonly_fields = ["created_at"]
    autocomplete_fields = ["user"]
    show_change_link = True

    def service_create(self, request, parent, cleaned_data):
        member = cleaned_data.get("user")
        return membership_create(
            user=request.user, member_id=member.pk if member else None, agency_id=parent.pk
        )


@admin.register(Agency)
class AgencyAdmin(ServiceFormAdmin):
    create_service = staticmethod(agency_create)
    update_service = staticmethod(agency_update)
    delete_service = staticmethod(agency_delete)
    service_fields = ("name", "address", "phone", "email")
    list_display = ["name", "phone", "email", "client_count", "created_at"]
    search_fields = ["name"]
    inlines = [ProducerInline, MembershipInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(client_count=Count("clients"))

    client_count = field_column("client_count", "clients")


@admin.register(Producer)
class ProducerAdmin(ServiceFormAdmin):
    create_service = staticmethod(producer_create)
    update_service = staticmethod(producer_update)
    delete_service = staticmethod(producer_delete)
    service_fields = PRODUCER_FIELDS
    service_relations = ("agency",)
    list_display = ["name", "agency", "contact_name", "phone", "email"]
    list_filter = ["agency"]
    search_fields = ["name", "contact_name", "email"]
    list_select_related = ["agency"]


@admin.register(AgencyMembership)
class AgencyMembershipAdmin(ServiceFormAdmin):
    """A membership is granted or revoked, never edited: change the pair by revoking it."""

    create_service = staticmethod(membership_create)
    delete_service = staticmethod(membership_delete)
    list_display = ["user", "agency", "created_at"]
    list_filter = ["agency"]
    search_fields = ["user__username", "agency__name"]
    list_select_related = ["user", "agency"]
    autocomplete_fields = ["user"]

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request, obj)

    def service_save(self, request, instance, cleaned_data, change):
        member, agency = cleaned_data.get("user"), cleaned_data.get("agency")
        return membership_create(
            user=request.user,
            member_id=member.pk if member else None,
            agency_id=agency.pk if agency else None,
        )
