from __future__ import annotations

from collections.abc import Callable

from django.core import signing
from django.core.files.storage import default_storage
from django.db.models import QuerySet
from django.http import FileResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from apps.core import idempotency
from apps.core.pagination import PagePagination
from apps.core.params import DotParam, IdParam, QueryParameters
from apps.core.permissions import offers_method
from apps.core.problems import problem_response
from apps.core.sorting import AsNumber, IgnoringCase
from apps.documents.api.serializers import (
    ClientUploadSerializer,
    DocumentSerializer,
    DownloadSerializer,
    PolicyUploadSerializer,
    ReplaceSerializer,
)
from apps.documents.models import Document, DocumentVersion, Module, module_permission
from apps.documents.selectors import client_documents, document_queryset, policy_documents
from apps.documents.services import document_delete, document_replace, document_upload
from apps.documents.storage import download_link, read_link
from apps.documents.uploads import UploadFormParser, prepare_upload

ACTIONS = {"GET": "view", "POST": "edit", "PUT": "edit", "DELETE": "delete"}
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    location=OpenApiParameter.HEADER,
    description="Retry safely: the first answer is replayed for 24 hours.",
)


class DocumentView(GenericAPIView):
    """Module-scoped permissions (view, edit, delete for client or policy) and upload limits."""

    module: str = Module.CLIENT
    permission_classes = [IsAuthenticated]  # and the module permission, checked below
    schema_unprocessable = True  # a deleted document, or a key reused for another request
    schema_may_403 = True  # the module permission is checked in check_permissions
    parser_classes = [UploadFormParser]
    pagination_class = PagePagination
    serializer_class = DocumentSerializer

    def module_of(self) -> str:
        return self.kwargs.get("module", self.module)

    def check_permissions(self, request):
        super().check_permissions(request)
        if not offers_method(request, self):
            return  # DRF answers 405 with Allow, whatever the caller's permissions
        action = ACTIONS.get(request.method, "view")
        if not request.user.has_perm(module_permission(action, self.module_of())):
            raise PermissionDenied(
                f"You need the {action} permission on {self.module_of()} documents."
            )

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in ("POST", "PUT") and offers_method(request, self):
            self.upload_handler = prepare_upload(request._request)

    def get_queryset(self):
        return Document.objects.none()

    def render_document(self, document, status_code=status.HTTP_200_OK):
        fresh = document_queryset(user=self.request.user).get(pk=document.pk)
        return Response(self.get_serializer(fresh).data, status=status_code)

    def upload_digest(self) -> str:
        return self.upload_handler.digests.get("file", "")


# `sort` (apps.core.sorting.SortFilter) on the document lists, besides `id`, `createdAt` (the
# first file's upload, annotated by the selectors) and `updatedAt`; each list adds its filters.
DOCUMENT_SORT_FIELDS = {
    "fileName": IgnoringCase("file_name"),
    "contentType": "content_type",
    "size": "size",
    "uploadedAt": "uploaded_at",
}


class DocumentCollectionView(DocumentView):
    """List a client's or policy's documents (subclasses name the selector and the
    `params_class` that parses the list's query parameters), or upload one."""

    upload_serializer: type = ClientUploadSerializer
    owner_field = "client_id"
    params_class: type[QueryParameters]
    list_selector: Callable[..., QuerySet]
    default_sort = ("-uploaded_at", "-id")
    sort_fields = DOCUMENT_SORT_FIELDS

    def list_queryset(self):
        return self.list_selector(user=self.request.user, **self.params_class.parse(self.request))

    def get(self, request):
        documents = self.filter_queryset(self.list_queryset())
        page = self.paginate_queryset(documents)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def post(self, request):
        key = idempotency.parse_key(request.headers.get(idempotency.HEADER))
        if key is None:
            return self.upload(request)
        fields = {
            name: request.data.getlist(name)
            for name in sorted(request.data)
            if name not in request.FILES
        }
        record, replay = idempotency.begin(
            user=request.user,
            method="POST",
            path=request.path,
            key=key,
            request_hash=idempotency.fingerprint(fields, self.upload_digest()),
        )
        if replay is not None:
            return replay
        try:
            response = self.upload(request)
        except Exception as exc:
            # The first answer is stored whatever it is; a 5xx forgets the key instead.
            response = self.handle_exception(exc)
        headers = {"Location": response["Location"]} if response.has_header("Location") else {}
        idempotency.finish(record, status=response.status_code, body=response.data, headers=headers)
        return response

    def upload(self, request) -> Response:
        body = self.upload_serializer(data=request.data, context={"request": request})
        body.is_valid(raise_exception=True)
        data = body.validated_data
        document = document_upload(
            user=request.user,
            module=self.module,
            owner_id=data[self.owner_field],
            file=data["file"],
            sha256=self.upload_digest(),
            description=data.get("description", ""),
        )
        response = self.render_document(document, status.HTTP_201_CREATED)
        response["Location"] = request.build_absolute_uri(
            f"/v1/documents/{document.pk}/{self.module}/download"
        )
        return response


def _collection_schema(route: str):
    """Document a collection: its list (its query parameters are its `params_class`'s) and its
    upload."""

    def decorate(view: type[DocumentCollectionView]) -> type[DocumentCollectionView]:
        return extend_schema_view(
            get=extend_schema(
                responses=DocumentSerializer(many=True),
                operation_id=f"documents_{route}_list",
            ),
            post=extend_schema(
                request={"multipart/form-data": view.upload_serializer},
                parameters=[IDEMPOTENCY_HEADER],
                responses={201: DocumentSerializer},
                operation_id=f"documents_{route}_create",
            ),
        )(view)

    return decorate


class ClientDocumentsParams(QueryParameters):
    one_of = ("client_id", "dot")
    client_id = IdParam(schema_type=int)
    dot = DotParam()


class PolicyDocumentsParams(QueryParameters):
    one_of = ("policy_id",)
    policy_id = IdParam(schema_type=int)


@_collection_schema("clients")
class ClientDocumentsView(DocumentCollectionView):
    """Documents of a client (module "client")."""

    module = Module.CLIENT
    params_class = ClientDocumentsParams
    sort_fields = {**DOCUMENT_SORT_FIELDS, "clientId": "client_id", "dot": AsNumber("client__dot")}

    list_selector = staticmethod(client_documents)


@_collection_schema("policies")
class PolicyDocumentsView(DocumentCollectionView):
    """Documents of a policy (module "policy")."""

    module = Module.POLICY
    upload_serializer = PolicyUploadSerializer
    owner_field = "policy_id"
    params_class = PolicyDocumentsParams
    sort_fields = {**DOCUMENT_SORT_FIELDS, "policyId": "policy_id"}

    list_selector = staticmethod(policy_documents)


class DocumentItemView(DocumentView):
    """Replace or delete one document, addressed through the module it belongs to."""

    def get_document(self, pk: int) -> Document:
        document = (
            document_queryset(user=self.request.user, module=self.module_of())
            .select_related("client")
            .filter(pk=pk)
            .first()
        )
        if document is None:
            raise NotFound("No document with this id in this module.")
        return document

    @extend_schema(
        request={"multipart/form-data": ReplaceSerializer},
        responses=DocumentSerializer,
        operation_id="documents_replace",
    )
    def put(self, request, pk: int, module: str = Module.CLIENT):
        document = self.get_document(pk)
        body = ReplaceSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        replaced = document_replace(
            user=request.user,
            document=document,
            file=body.validated_data["file"],
            sha256=self.upload_digest(),
        )
        return self.render_document(replaced)

    @extend_schema(responses={204: None}, operation_id="documents_delete")
    def delete(self, request, pk: int, module: str = Module.CLIENT):
        document_delete(user=request.user, document=self.get_document(pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentDownloadView(DocumentItemView):
    """A time-limited download link for one document."""

    http_method_names = ["get", "head", "options"]

    @extend_schema(responses=DownloadSerializer, operation_id="documents_download")
    def get(self, request, pk: int, module: str = Module.CLIENT):
        document = self.get_document(pk)
        if not document.live:
            raise NotFound("The document is deleted.")
        link = download_link(
            request,
            document_id=document.pk,
            storage_name=document.storage_name,
            file_name=document.file_name,
        )
        return Response(DownloadSerializer.shape(document, link))


@csrf_exempt  # no session or cookie is involved: the link is the credential
def document_file(request, token: str):
    """The signed link itself: its own credential, served without apiKey or bearer.

    GET and HEAD only; any other method is a problem+json 405 naming them (never Django's
    HTML pages: the CSRF 403 for a POST, the bare 405 for the rest).
    """
    if request.method not in ("GET", "HEAD"):
        response = problem_response(405, f'Method "{request.method}" not allowed.')
        response["Allow"] = "GET, HEAD"
        return response
    try:
        document_id, storage_name = read_link(token)
    except signing.SignatureExpired:
        return problem_response(403, "This download link has expired.")
    except signing.BadSignature:
        return problem_response(403, "This download link is not valid.")
    document = Document.objects.live().filter(pk=document_id).first()
    if document is None:
        return problem_response(404, "The document no longer exists.")
    if storage_name == document.storage_name:
        file_name, content_type = document.file_name, document.content_type
    else:
        version = DocumentVersion.objects.filter(document=document, storage_name=storage_name)
        version = version.first()
        if version is None:
            return problem_response(404, "The document no longer exists.")
        file_name, content_type = version.file_name, version.content_type
    try:
        handle = default_storage.open(storage_name, "rb")
    except FileNotFoundError:
        return problem_response(404, "The document's file no longer exists.")
    except Exception:
        return problem_response(503, "Document storage is unavailable; try again shortly.")
    return FileResponse(handle, as_attachment=True, filename=file_name, content_type=content_type)
