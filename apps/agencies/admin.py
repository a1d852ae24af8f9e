from django.contrib import admin
from django.db.models import Count

from apps.agencies.models import Agency, AgencyMembership, Producer
from apps.core.admin import AgencyScopedAdmin


class ProducerInline(admin.TabularInline):
    model = Producer
    extra = 0


class MembershipInline(admin.TabularInline):
    model = AgencyMembership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Agency)
class AgencyAdmin(AgencyScopedAdmin):
    list_display = ["name", "phone", "email", "client_count", "created_at"]
    search_fields = ["name"]
    inlines = [ProducerInline, MembershipInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(client_count=Count("clients"))

    @admin.display(ordering="client_count", description="clients")
    def client_count(self, obj):
        return obj.client_count


@admin.register(Producer)
class ProducerAdmin(AgencyScopedAdmin):
    list_display = ["name", "agency", "contact_name", "phone", "email"]
    list_filter = ["agency"]
    search_fields = ["name", "contact_name", "email"]
    list_select_related = ["agency"]


@admin.register(AgencyMembership)
class AgencyMembershipAdmin(AgencyScopedAdmin):
    list_display = ["user", "agency", "created_at"]
    list_filter = ["agency"]
    search_fields = ["user__username", "agency__name"]
    list_select_related = ["user", "agency"]
    autocomplete_fields = ["user"]
