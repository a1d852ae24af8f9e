from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from rest_framework.exceptions import APIException, ParseError
from rest_framework.exceptions import ValidationError as DRFValidationError

from apps.clients.models import Client
from apps.core.admin import (
    AgencyScopedInline,
    KeyCheckedAutocompleteSelect,
    NamedRowsInline,
    ReadOnlyAdminMixin,
    ScopedHistoryAdmin,
    service_errors,
)
from apps.core.admin_display import (
    AutocompleteFilter,
    AutocompleteFilterMedia,
    DeletedColumnMixin,
    DeletedFilter,
    field_column,
    human_size,
    when,
)
from apps.core.request_bodies import MAX_FILE_BYTES
from apps.documents.models import Document, DocumentVersion, Module, module_permission
from apps.documents.services import document_delete, document_upload
from apps.documents.storage import ALLOWED_CONTENT_TYPES
from apps.documents.uploads import FileTooLarge, LimitedUploadHandler, read_upload_form
from apps.policies.models import Policy


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


class DocumentVersionInline(SizeAndTimesMixin, NamedRowsInline):
    model = DocumentVersion
    extra = 0
    can_delete = False
    fields = ["file_name", "content_type", "file_size", "sha256", "uploaded", "replaced"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


def _may(user, action: str, module: str | None = None) -> bool:
    """Whether `user` may do `action` to a module's documents (any module's, without one): the
    permission the API's document endpoints ask (`module_permission`)."""
    modules = Module.values if module is None else [module]
    return any(user.has_perm(module_permission(action, m)) for m in modules)


def _said(exc) -> str:
    """An API exception's detail as a sentence: "The file is …", or "description: Not UTF-8 …"."""
    if isinstance(exc.detail, dict):
        return " ".join(f"{key}: {' '.join(map(str, v))}" for key, v in exc.detail.items())
    return str(exc.detail)


def _viewable(queryset, user):
    """The documents of the modules `user` may view, as the API's lists and downloads allow."""
    return queryset.filter(module__in=[m for m in Module.values if _may(user, "view", m)])


class DocumentUploadForm(forms.Form):
    """A file for a client or one of its policies, as `POST /v1/documents/clients|policies`
    takes it: the same service judges the owner, the size, the type and the name."""

    client = forms.ModelChoiceField(
        queryset=Client.objects.none(),
        required=False,
        help_text="A client's own document (a permit, an IFTA licence, a W-9); or choose a policy.",
    )
    policy = forms.ModelChoiceField(
        queryset=Policy.objects.none(),
        required=False,
        help_text="A policy's document (a declarations page, an endorsement).",
    )
    file = forms.FileField(
        allow_empty_file=True,  # the service's own message says so
        help_text=f"{', '.join(dict.fromkeys(ALLOWED_CONTENT_TYPES.values()))}; "
        f"at most {MAX_FILE_BYTES:,} bytes (25 MiB).",
    )
    description = forms.CharField(max_length=500, required=False, widget=forms.Textarea)

    def __init__(self, *args, user, admin_site, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        for name, queryset in (
            ("client", Client.objects.for_user(user).live()),
            ("policy", Policy.objects.for_user(user).live("client").select_related("client")),
        ):
            field = self.fields[name]
            field.widget = KeyCheckedAutocompleteSelect(Document._meta.get_field(name), admin_site)
            field.queryset = queryset  # after the widget: gives it its choices

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        client, policy = data.get("client"), data.get("policy")
        if (client is None) == (policy is None):
            raise ValidationError("Choose a client or a policy, not both.")
        module = Module.CLIENT if client is not None else Module.POLICY
        if not _may(self.user, "edit", module):
            raise ValidationError(f"You need the edit permission on {module} documents.")
        data["module"], data["owner"] = module, client or policy
        return data


@admin.register(Document)
class DocumentAdmin(
    AutocompleteFilterMedia,
    ReadOnlyAdminMixin,
    SizeAndTimesMixin,
    DeletedColumnMixin,
    ScopedHistoryAdmin,
):
    """A stored document is evidence: its record is never edited here. Staff upload a new one
    (`upload/`) and delete one (an action) through the services the API calls: the same owner,
    size, type and permission rules, the same events; a replacement goes through the API."""

    change_list_template = "admin/documents/document/change_list.html"

    # The module is the policy column's: a client document has none (and `module` filters).
    list_display = [
        "file_name",
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
            path(
                "upload/",
                self.admin_site.admin_view(csrf_exempt(self.upload_entry)),
                name="documents_document_upload",
            ),
            *super().get_urls(),
        ]

    actions = ["delete_documents"]

    @staticmethod
    def may_upload(request) -> bool:
        return _may(request.user, "edit")

    def has_delete_documents_permission(self, request) -> bool:
        return _may(request.user, "delete")

    @admin.action(
        description="Delete the selected documents (their files are removed)",
        permissions=["delete_documents"],
    )
    def delete_documents(self, request, queryset):
        """`DELETE /v1/documents/{id}/client|policy` for each: the same service, permission
        (per document's module) and event; the files leave storage once the deletion commits.
        Asked for again on a page that names each document first: it cannot be undone."""
        if "confirm" not in request.POST:
            return TemplateResponse(
                request,
                "admin/documents/document/delete_documents.html",
                {
                    **self.admin_site.each_context(request),
                    "title": "Delete these documents?",
                    "documents": queryset.select_related("client", "policy"),
                    "opts": self.opts,
                    "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                },
            )

        def delete(document):
            if not _may(request.user, "delete", document.module):
                raise PermissionDenied(
                    f"You need the delete permission on {document.module} documents."
                )
            document_delete(user=request.user, document=document)

        self.run_service(request, queryset, delete, "Deleted")
        return None

    def changelist_view(self, request, extra_context=None):
        context = {"may_upload": self.may_upload(request), **(extra_context or {})}
        return super().changelist_view(request, context)

    def upload_entry(self, request):
        """The file streams through the API's upload handler (its size limit and digest), which
        must be in place before anything reads the body; the CSRF check, which reads it, comes
        after. A body past the limit is answered with the form again, nothing stored."""
        if not self.may_upload(request):
            raise PermissionDenied
        handler = None
        try:
            if request.method == "POST":
                handler = read_upload_form(request)
            return csrf_protect(self.upload_view)(request, handler)
        except (FileTooLarge, ParseError, DRFValidationError) as exc:
            # Nothing was stored, and the form's fields are not shown again (not read, or not
            # text that can be shown): the page says why.
            form = DocumentUploadForm(user=request.user, admin_site=self.admin_site)
            status = 413 if isinstance(exc, FileTooLarge) else 400
            return self._upload_page(request, form, status=status, refused=_said(exc))

    def upload_view(self, request, handler: LimitedUploadHandler | None):
        if request.method != "POST":
            initial = {
                name: request.GET[name]
                for name in ("client", "policy")
                if request.GET.get(name, "").isascii() and request.GET.get(name, "").isdigit()
            }
            form = DocumentUploadForm(
                initial=initial, user=request.user, admin_site=self.admin_site
            )
            return self._upload_page(request, form)
        form = DocumentUploadForm(
            request.POST, request.FILES, user=request.user, admin_site=self.admin_site
        )
        if form.is_valid():
            data = form.cleaned_data
            try:
                document = document_upload(
                    user=request.user,
                    module=data["module"],
                    owner_id=data["owner"].pk,
                    file=data["file"],
                    sha256=handler.digests.get("file", ""),
                    description=data["description"],
                )
            except (ValidationError, PermissionDenied, APIException) as exc:
                service_errors(form, exc)
            else:
                owner = data["owner"]
                self.message_user(
                    request,
                    f"Uploaded {document.file_name} ({document.content_type}) to {owner}.",
                    messages.SUCCESS,
                )
                meta = owner._meta
                return HttpResponseRedirect(
                    reverse(
                        f"admin:{meta.app_label}_{meta.model_name}_change",
                        args=[owner.pk],
                        current_app=self.admin_site.name,
                    )
                )
        return self._upload_page(request, form, status=400)

    def _upload_page(self, request, form, status: int = 200, refused: str = ""):
        return TemplateResponse(
            request,
            "admin/documents/document/upload.html",
            {
                **self.admin_site.each_context(request),
                "title": "Upload a document",
                "form": form,
                "refused": refused,
                "media": self.media + form.media,
                "opts": self.opts,
            },
            status=status,
        )

    def get_queryset(self, request):
        return _viewable(super().get_queryset(request), request.user)

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
        return _viewable(super().get_queryset(request).live(), request.user)

    def has_add_permission(self, request, obj=None):
        return False


class ClientDocumentInline(DocumentInline):
    fk_name = "client"
    verbose_name_plural = "documents"


class PolicyDocumentInline(DocumentInline):
    fk_name = "policy"
    verbose_name_plural = "policy documents"
