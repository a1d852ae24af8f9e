"""Reads of documents; agency scoping is applied here."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.documents.models import Document, Module


def document_queryset(*, user, module: str | None = None) -> QuerySet[Document]:
    documents = Document.objects.for_user(user).select_related("uploaded_by")
    if module is not None:
        documents = documents.filter(module=module)
    return documents


def client_documents(*, user, client_id: int | None = None, dot: str | None = None):
    """Live client-module documents of one visible client (by id or DOT)."""
    documents = document_queryset(user=user, module=Module.CLIENT).live()
    if client_id is not None:
        return documents.filter(client_id=client_id)
    return documents.live("client").filter(client__dot=dot)


def policy_documents(*, user, policy_id: int):
    """Live policy-module documents of one visible policy."""
    return document_queryset(user=user, module=Module.POLICY).live().filter(policy_id=policy_id)
