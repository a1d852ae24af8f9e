from django.contrib import admin

from apps.certificates.admin_actions import download_client_certificates
from apps.clients.models import Client
from apps.core.admin import AgencyScopedAdmin
from apps.documents.admin import ClientDocumentInline


@admin.register(Client)
class ClientAdmin(AgencyScopedAdmin):
    list_display = ["client_name", "dot", "agency", "producer", "client_type", "state", "deleted"]
    list_filter = ["agency", "deleted", "client_type", "acord_enabled", "state"]
    search_fields = ["client_name", "dot"]
    list_select_related = ["agency", "producer", "client_type", "state"]
    autocomplete_fields = ["parent_client", "state", "city", "mailing_state", "mailing_city"]
    readonly_fields = ["created_at", "updated_at", "created_by", "updated_by", "deleted_at"]
    actions = [download_client_certificates]
    inlines = [ClientDocumentInline]
