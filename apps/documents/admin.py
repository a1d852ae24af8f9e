from django.contrib import admin
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.urls import path, reverse
from django.utils.html import format_html

from apps.core.admin import AgencyScopedInline, ScopedHistoryAdmin
from apps.documents.models import Document, DocumentVersion


class DocumentVersionInline(admin.TabularInline):
    model = DocumentVersion
    extra = 0
    can_delete = False
    fields = ["file_name", "content_type", "size", "sha256", "uploaded_at", "replaced_at"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Document)
class DocumentAdmin(ScopedHistoryAdmin):
    list_display = [
        "file_name",
        "module",
        "client",
        "policy",
        "content_type",
        "size",
        "uploaded_at",
        "uploaded_by",
        "deleted",
        "download",
    ]
    list_filter = ["module", "deleted", "content_type", "uploaded_at"]
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
        "size",
        "sha256",
        "uploaded_at",
        "uploaded_by",
        "deleted",
        "deleted_at",
        "deleted_by",
        "download",
    ]
    fields = ["description", *readonly_fields]
    inlines = [DocumentVersionInline]

    def has_add_permission(self, request):
        return False  # uploads go through the API, which checks size, type and idempotency

    def has_delete_permission(self, request, obj=None):
        return False  # deletion is a soft delete through the API

    @admin.display(description="file")
    def download(self, obj: Document):
        if obj.deleted:
            return "—"
        url = reverse("admin:documents_document_download", args=[obj.pk])
        return format_html('<a href="{}">download</a>', url)

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
        document = self.get_queryset(request).filter(pk=pk, deleted=False).first()
        if document is None or not self.has_view_permission(request, document):
            raise Http404("No such document.")
        handle = default_storage.open(document.storage_name, "rb")
        return FileResponse(
            handle,
            as_attachment=True,
            filename=document.file_name,
            content_type=document.content_type,
        )


class DocumentInline(AgencyScopedInline):
    model = Document
    fields = ["file_name", "module", "content_type", "size", "uploaded_at", "deleted"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class ClientDocumentInline(DocumentInline):
    fk_name = "client"
    verbose_name_plural = "documents"


class PolicyDocumentInline(DocumentInline):
    fk_name = "policy"
    verbose_name_plural = "policy documents"
