"""Reads of documents; agency scoping is applied here."""

from __future__ import annotations

from django.db.models import F, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from apps.documents.models import Document, DocumentVersion, Module


def document_queryset(*, user, module: str | None = None) -> QuerySet[Document]:
    documents = Document.objects.for_user(user).select_related("uploaded_by")
    if module is not None:
        documents = documents.filter(module=module)
    return documents


def with_created_at(documents: QuerySet[Document]) -> QuerySet[Document]:
    """Each document's `created_at`: when its first file was uploaded. A replacement moves
    `uploaded_at` to the new file's upload and keeps the earlier files as versions, the
    oldest of which holds the first upload's time."""
    first_upload = (
        DocumentVersion.objects.filter(document=OuterRef("pk"))
        .order_by("uploaded_at", "id")
        .values("uploaded_at")[:1]
    )
    return documents.annotate(created_at=Coalesce(Subquery(first_upload), F("uploaded_at")))


def client_documents(*, user, client_id: int | None = None, dot: str | None = None):
    """Live client-module documents of one visible client (by id or DOT)."""
    documents = with_created_at(document_queryset(user=user, module=Module.CLIENT).live())
    if client_id is not None:
        return documents.filter(client_id=client_id)
    return documents.live("client").filter(client__dot=dot)


def policy_documents(*, user, policy_id: int):
    """Live policy-module documents of one visible policy."""
    documents = with_created_at(document_queryset(user=user, module=Module.POLICY).live())
    return documents.filter(policy_id=policy_id)
