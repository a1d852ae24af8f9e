"""Writes of clients: every business rule of a client lives here."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from apps.agencies.models import Agency, Producer
from apps.clients.models import Client
from apps.core.exceptions import Conflict
from apps.core.models import agency_ids_for
from apps.events.records import client_record
from apps.events.services import event_emit, status_watch

CLIENT_FIELDS = (
    "client_name",
    "dot",
    "client_type",
    "acord_enabled",
    "cargo_class",
    "address",
    "state",
    "city",
    "zip_code",
    "mailing_address",
    "mailing_state",
    "mailing_city",
    "mailing_zip_code",
    "phone",
    "email",
)


def _authorized_agency(user, agency_id: int) -> Agency:
    """The agency a write names; any agency outside the caller's is 403, existing or not."""
    allowed = agency_ids_for(user)
    if allowed is not None and agency_id not in allowed:
        raise PermissionDenied("You are not authorized for this agency.")
    agency = Agency.objects.filter(pk=agency_id).first()
    if agency is None:
        raise ValidationError({"agency_id": "Unknown agency."})
    return agency


def _producer_of(agency: Agency, producer_id: int | None) -> Producer | None:
    if producer_id is None:
        return None
    producer = Producer.objects.filter(pk=producer_id, agency=agency).first()
    if producer is None:
        raise ValidationError({"producer_id": "No producer with this id in the client's agency."})
    return producer


def _check_parent(user, client: Client, parent_id: int | None) -> Client | None:
    if parent_id is None:
        return None
    parent = Client.objects.for_user(user).filter(pk=parent_id).first()
    if parent is None:
        raise ValidationError({"parent_client_id": "No client with this id."})
    if parent.agency_id != client.agency_id:
        raise ValidationError(
            {"parent_client_id": "The parent client must belong to the same agency."}
        )
    ancestor, seen = parent, set()
    while ancestor is not None and ancestor.pk not in seen:
        if client.pk is not None and ancestor.pk == client.pk:
            raise ValidationError(
                {"parent_client_id": "A client cannot be its own parent or ancestor."}
            )
        seen.add(ancestor.pk)
        ancestor = ancestor.parent_client
    return parent


def _check_dot_free(client: Client) -> None:
    if not client.dot or client.deleted:
        return
    taken = (
        Client.objects.live()
        .filter(agency_id=client.agency_id, dot=client.dot)
        .exclude(pk=client.pk)
        .exists()
    )
    if taken:
        raise Conflict(f"A live client with DOT {client.dot} already exists in this agency.")


@transaction.atomic
def client_create(*, user, data: dict[str, Any]) -> Client:
    """Create a client in an agency the user is authorized for."""
    agency = _authorized_agency(user, data["agency_id"])
    client = Client(agency=agency, created_by=user, updated_by=user)
    for field in CLIENT_FIELDS:
        if field in data:
            setattr(client, field, data[field])
    client.producer = _producer_of(agency, data.get("producer_id"))
    client.parent_client = _check_parent(user, client, data.get("parent_client_id"))
    if data.get("deleted"):
        client.deleted, client.deleted_at = True, timezone.now()
    _check_dot_free(client)
    client.full_clean(validate_constraints=False)
    client.save()
    event_emit(
        type="client.created",
        agency_id=client.agency_id,
        client_id=client.pk,
        data=client_record(client),
    )
    return client


@transaction.atomic
def client_update(*, user, instance: Client, data: dict[str, Any]) -> Client:
    """Partial update; `deleted` soft-deletes or restores, `agencyId` moves the client."""
    client = Client.objects.select_for_update().get(pk=instance.pk)
    if "agency_id" in data and data["agency_id"] != client.agency_id:
        client.agency = _authorized_agency(user, data["agency_id"])
        if "producer_id" not in data and client.producer_id:
            client.producer = None
    for field in CLIENT_FIELDS:
        if field in data:
            setattr(client, field, data[field])
    if "producer_id" in data:
        client.producer = _producer_of(client.agency, data["producer_id"])
    if "parent_client_id" in data:
        client.parent_client = _check_parent(user, client, data["parent_client_id"])
    elif client.parent_client_id and client.parent_client.agency_id != client.agency_id:
        raise ValidationError(
            {"parent_client_id": "The parent client must belong to the same agency."}
        )
    if "deleted" in data and data["deleted"] != client.deleted:
        client.deleted = data["deleted"]
        client.deleted_at = timezone.now() if client.deleted else None
    _check_dot_free(client)
    client.updated_by = user
    client.full_clean(validate_constraints=False)
    was_deleted = Client.objects.filter(pk=client.pk).values_list("deleted", flat=True).get()
    with status_watch(client_ids=[client.pk]):
        client.save()
    kind = "updated"
    if client.deleted != was_deleted:
        kind = "deleted" if client.deleted else "restored"
    event_emit(
        type=f"client.{kind}",
        agency_id=client.agency_id,
        client_id=client.pk,
        data=client_record(client),
    )
    return client
