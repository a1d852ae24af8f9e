"""Writes of documents: a row and its file exist together or not at all."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.clients.models import Client
from apps.core.exceptions import UnprocessableEntity
from apps.core.services import client_lock_first, locked_for_update, rows_lock
from apps.documents.models import Document, DocumentVersion, Module
from apps.documents.storage import check_upload, clean_file_name, remove, store
from apps.events.records import record
from apps.events.services import event_emit
from apps.policies.models import Policy


def document_owner(*, user, module: str, owner_id: int) -> tuple[Client, Policy | None]:
    """The visible, live client or policy an upload names (a policy of a live client: a deleted
    client's policies stay live, but take no new file); a 400 on its field otherwise."""
    if module == Module.CLIENT:
        client = Client.objects.for_user(user).live().filter(pk=owner_id).first()
        if client is None:
            raise ValidationError({"client_id": "No client with this id."})
        return client, None
    policy = (
        Policy.objects.for_user(user)
        .select_related("client")
        .live("client")
        .filter(pk=owner_id)
        .first()
    )
    if policy is None:
        raise ValidationError({"policy_id": "No policy with this id."})
    return policy.client, policy


def _owner_locked(*, user, module: str, owner_id: int) -> tuple[Client, Policy | None]:
    """`document_owner` again, with its rows locked in the order every write takes (the
    client, then its policy): what a move or a deletion of the owner left is what it reads."""
    if module == Module.CLIENT:
        rows_lock(Client._base_manager.filter(pk=owner_id))
    else:
        client_lock_first(Policy, owner_id)
        rows_lock(Policy._base_manager.filter(pk=owner_id))
    return document_owner(user=user, module=module, owner_id=owner_id)


def _emit(kind: str, document: Document, agency_id: int) -> None:
    """`document.uploaded|replaced|deleted`, with the document as the API lists it (metadata,
    never the file nor a link to it)."""
    event_emit(
        type=f"document.{kind}",
        agency_id=agency_id,
        client_id=document.client_id,
        data=record("document", document, agency_id=agency_id),
    )


def document_upload(
    *, user, module: str, owner_id: int, file, sha256: str, description: str = ""
) -> Document:
    """Store the file, then its row; if the row fails, the file is removed again. The owner is
    judged before the file is stored (a 400 costs no storage) and again under its lock with the
    row: a move of its client to another agency, or its deletion, committed meanwhile, is seen
    there, and the upload is a 400 as if sent after it (never stored, never announced to the
    agency the client left)."""
    client, policy = document_owner(user=user, module=module, owner_id=owner_id)
    file_name = clean_file_name(getattr(file, "name", None))
    content_type = check_upload(file)
    storage_name = store(
        file,
        client_id=client.id,
        agency_id=client.agency_id,
        file_name=file_name,
        content_type=content_type,
    )
    try:
        with transaction.atomic():
            client, policy = _owner_locked(user=user, module=module, owner_id=owner_id)
            document = Document(
                module=module,
                client=client,
                policy=policy,
                file_name=file_name,
                storage_name=storage_name,
                content_type=content_type,
                size=file.size,
                sha256=sha256,
                description=description,
                uploaded_by=user,
            )
            document.full_clean()
            document.save()
            _emit("uploaded", document, client.agency_id)
    except BaseException:
        remove([storage_name])
        raise
    return document


def document_replace(*, user, document: Document, file, sha256: str) -> Document:
    """Replace the file; the id stays and the earlier file is kept as a previous version."""
    if not document.live:  # deleted, or its owner is (LIVE_WITH)
        raise UnprocessableEntity("The document is deleted.")
    # A live policy of a deleted client takes no new file, as it takes no new upload (400
    # there: the upload names it; here it is the document's own).
    for owner in (document.policy, document.client) if document.policy_id else ():
        if owner.deleted:
            raise UnprocessableEntity(f"The document's {owner._meta.verbose_name} is deleted.")
    file_name = clean_file_name(getattr(file, "name", None))
    content_type = check_upload(file)
    storage_name = store(
        file,
        client_id=document.client_id,
        agency_id=document.client.agency_id,
        file_name=file_name,
        content_type=content_type,
    )
    try:
        with transaction.atomic():
            client_lock_first(Document, document.pk)
            current = locked_for_update(Document.objects, user, document.pk)
            if not current.live:
                raise UnprocessableEntity("The document is deleted.")
            DocumentVersion.objects.create(
                document=current,
                file_name=current.file_name,
                storage_name=current.storage_name,
                content_type=current.content_type,
                size=current.size,
                sha256=current.sha256,
                uploaded_at=current.uploaded_at,
                uploaded_by=current.uploaded_by,
            )
            current.file_name, current.storage_name = file_name, storage_name
            current.content_type, current.size, current.sha256 = content_type, file.size, sha256
            current.uploaded_by, current.uploaded_at = user, timezone.now()
            current.save()
            _emit("replaced", current, document.client.agency_id)
    except BaseException:
        remove([storage_name])
        raise
    return current


def document_delete(*, user, document: Document) -> None:
    """Soft-delete the row and remove its file and versions from storage; twice is a 422."""
    with transaction.atomic():
        client_lock_first(Document, document.pk)
        current = locked_for_update(Document.objects, user, document.pk)
        if not current.live:  # deleted, or its owner is (LIVE_WITH)
            raise UnprocessableEntity("The document is already deleted.")
        names = [current.storage_name, *current.versions.values_list("storage_name", flat=True)]
        current.mark_deleted(True)
        current.deleted_by = user
        current.save(update_fields=["deleted", "deleted_at", "deleted_by", "updated_at"])
        _emit("deleted", current, document.client.agency_id)
        # Files go only once the deletion is certain to be committed.
        transaction.on_commit(lambda: remove(names))
