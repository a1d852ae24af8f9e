from django.contrib import admin
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.urls import path, reverse
from django.utils.html import format_html

from apps.core.admin import AgencyScopedInline, ReadOnlyAdminMixin, ScopedHistoryAdmin
from apps.core.admin_display import (
    AutocompleteFilter,
    AutocompleteFilterMedia,
    DeletedColumnMixin,
    DeletedFilter,
    field_column,
    human_size,
    when,
)
from apps.documents.models import Document, DocumentVersion


class SizeAndTimesMixin:
    """Sizes in KB/MB and timestamps with their time zone, wherever documents are listed."""

    file_size = field_column("size", "size", human_size)
    uploaded = field_column("uploaded_at", "uploaded", when)
    replaced = field_column("replaced_at", "replaced", when)
    deleted_when = field_column("deleted_at", "deleted at", when)
    carrier = field_column("client__client_name", "client")

    @admin.display(description="policy", ordering="policy__policy_number")
    def policy_number(self, obj) -> str:
        return obj.policy.policy_number if obj.policy_id else "—"

    @admin.display(description="file")
    def download(self, obj):
        if not obj.live:
            return "— (deleted)"
        url = reverse("admin:documents_document_download", args=[obj.pk])
        return format_html('<a href="{}" class="bo-download">download</a>', url)


class DocumentVersionInline(SizeAndTimesMixin, admin.TabularInline):
    model = DocumentVersion
    extra = 0
    can_delete = False
    fields = ["file_name", "content_type", "file_size", "sha256", "uploaded", "replaced"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Document)
class DocumentAdmin(
    AutocompleteFilterMedia,
    ReadOnlyAdminMixin,
    SizeAndTimesMixin,
    DeletedColumnMixin,
    ScopedHistoryAdmin,
):
    """Read-only: uploads go through the API, which checks size, type and idempotency;
    deletion is a soft delete through the API; a stored document is evidence, its record
    changes only through the API."""

    list_display = [
        "file_name",
        "module",
        "carrier",
        "policy_number",
        "file_size",
        "uploaded",
        "uploaded_by",
        "download",
    ]
    list_filter = [
        DeletedFilter,
        "module",
        "content_type",
        "uploaded_at",
        ("client", AutocompleteFilter),
    ]
    search_fields = [
        "file_name",
        "description",
        "client__client_name",
        "client__dot",
        "policy__policy_number",
        "sha256",
    ]
    list_select_related = ["client", "policy", "policy__coverage_type", "uploaded_by"]
    readonly_fields = [
        "module",
        "client",
        "policy",
        "file_name",
        "storage_name",
        "content_type",
        "file_size",
        "sha256",
        "uploaded",
        "uploaded_by",
        "deleted_marker",
        "deleted_when",
        "deleted_by",
        "download",
    ]
    fields = ["description", *readonly_fields]
    inlines = [DocumentVersionInline]

    def get_urls(self):
        return [
            path(
                "<int:pk>/download/",
                self.admin_site.admin_view(self.download_view),
                name="documents_document_download",
            ),
            *super().get_urls(),
        ]

    def download_view(self, request, pk: int):
        document = self.get_queryset(request).live().filter(pk=pk).first()
        if document is None or not self.has_view_permission(request, document):
            raise Http404("No such document.")
        handle = default_storage.open(document.storage_name, "rb")
        return FileResponse(
            handle,
            as_attachment=True,
            filename=document.file_name,
            content_type=document.content_type,
        )


class DocumentInline(SizeAndTimesMixin, AgencyScopedInline):
    model = Document
    fields = ["file_name", "module", "content_type", "file_size", "uploaded", "download"]
    readonly_fields = fields
    can_delete = False

    def get_queryset(self, request):
        return super().get_queryset(request).live()

    def has_add_permission(self, request, obj=None):
        return False


class ClientDocumentInline(DocumentInline):
    fk_name = "client"
    verbose_name_plural = "documents"


class PolicyDocumentInline(DocumentInline):
    fk_name = "policy"
    verbose_name_plural = "policy documents"
