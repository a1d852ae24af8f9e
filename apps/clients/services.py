"""Writes of clients: every business rule of a client lives here."""

from __future__ import annotations

from typing import TypedDict, Unpack

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from apps.agencies.models import Agency, Producer
from apps.agencies.services import authorized_agency
from apps.clients.models import Client
from apps.clients.selectors import CLIENT_RELATIONS, visible_client
from apps.core.models import UNIQUE
from apps.core.services import (
    left_behind,
    links_clear,
    locked_for_update,
    model_update,
    rows_lock,
)
from apps.coverages.status import status_events_of_new, status_watch
from apps.events.records import record, records_updated_emit
from apps.events.services import client_event_emit, record_event_emit
from apps.masterdata.models import City, ClientType, State, address_check
from apps.policies.models import Policy, policy_number_key
from apps.policies.services import policies_producer_clear
from apps.vehicles.services import vehicles_lienholder_clear


class ClientFields(TypedDict, total=False):
    """The plain fields of a client a caller may set; relations travel as ids."""

    client_name: str
    dot: str
    client_type: ClientType | None
    acord_enabled: bool
    cargo_class: str
    address: str
    state: State | None
    city: City | None
    zip_code: str
    mailing_address: str
    mailing_state: State | None
    mailing_city: City | None
    mailing_zip_code: str
    phone: str
    email: str


class ClientChanges(ClientFields, total=False):
    """A partial update: any plain field, and the relations and state a client_update moves."""

    agency_id: int
    producer_id: int | None
    parent_client_id: int | None
    deleted: bool


CLIENT_FIELDS = tuple(ClientFields.__annotations__)
ADDRESSES = (("city", "state"), ("mailing_city", "mailing_state"))  # (city, its state)


def _producer_of(agency: Agency, producer_id: int | None) -> Producer | None:
    if producer_id is None:
        return None
    producer = Producer.objects.filter(pk=producer_id, agency=agency).first()
    if producer is None:
        raise ValidationError({"producer_id": "No producer with this id in the client's agency."})
    return producer


def _check_parent(user, client: Client, agency_id: int, parent_id: int | None) -> Client | None:
    """The parent named for `client` once in `agency_id`: visible, same agency, no cycle. A new
    parent is named as any write names a client (`visible_client`: live, else a 400 as for a
    missing one); the parent the client has is kept even if deleted since, as its other
    children are (deleting a parent leaves them alone)."""
    if parent_id is None:
        return None
    if client.pk is not None and parent_id == client.parent_client_id:
        parent = client.parent_client
    else:
        parent = visible_client(user, parent_id, field="parent_client_id")
    if parent.agency_id != agency_id:
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


def _check_policy_numbers_free(client: Client, agency_id: int) -> None:
    """A client moving to `agency_id` takes its policies along; a policy number is unique per
    insurer among the live policies of one agency (contract section 13), so a live policy of the
    client whose number (in any case, `policy_number_key`) and insurer a live policy of that
    agency has refuses the move (409, as the rule's constraint answers), named. One statement,
    however many policies it has."""
    taken = (
        Policy.objects.live()
        .annotate(number_key=policy_number_key())
        .filter(
            agency_id=agency_id,
            insurer_id=OuterRef("insurer_id"),
            number_key=policy_number_key(OuterRef("policy_number")),
        )
    )
    clashes = list(
        Policy.objects.live()
        .filter(Exists(taken), client_id=client.pk)
        .order_by("policy_number", "pk")
        .values_list("policy_number", "insurer__name")
    )
    if not clashes:
        return
    (number, insurer), more = clashes[0], len(clashes) - 1
    also = f" (and {more} more of its policies)" if more else ""
    raise ValidationError(
        {
            "agency_id": ValidationError(
                f"The client's policy {number} ({insurer}) cannot move: a live policy with this "
                f"number and insurer exists in that agency{also}.",
                code=UNIQUE,
            )
        }
    )


@transaction.atomic
def client_create(
    *,
    user,
    agency_id: int,
    producer_id: int | None = None,
    parent_client_id: int | None = None,
    deleted: bool = False,
    **fields: Unpack[ClientFields],
) -> Client:
    """Create a client in an agency the user is authorized for."""
    agency = authorized_agency(user, agency_id)
    client = Client(agency=agency, created_by=user, updated_by=user, **fields)
    client.producer = _producer_of(agency, producer_id)
    client.parent_client = _check_parent(user, client, agency.pk, parent_client_id)
    client.mark_deleted(deleted)
    address_check(client, fields, ADDRESSES)
    client.full_clean()
    client.save()
    client_event_emit(
        type="client.created",
        client=client,
        data=record("client", client),
        along=status_events_of_new(clients=[client]),  # verification finds it from now on
    )
    return client


@transaction.atomic
def client_update(*, user, instance: Client, **changes: Unpack[ClientChanges]) -> Client:
    """Partial update; `deleted` soft-deletes or restores, `agency_id` moves the client."""
    client = locked_for_update(Client.objects, user, instance.pk)
    was_deleted = client.deleted
    data: dict = {**changes}
    agency_id = changes.get("agency_id", client.agency_id)
    moved = agency_id != client.agency_id
    if moved:
        data["agency"] = authorized_agency(user, agency_id)
        if client.children.exists():  # they would name a parent their agency cannot see
            raise ValidationError(
                {
                    "agency_id": "A client with child clients (deleted ones included) cannot "
                    "move to another agency."
                }
            )
        _check_policy_numbers_free(client, agency_id)
    if left_behind(changes, "producer_id", client.producer_id, moves=moved):
        data["producer"] = None
    elif "producer_id" in changes:
        data["producer"] = _producer_of(data.get("agency", client.agency), changes["producer_id"])
    if "parent_client_id" in changes:
        data["parent_client"] = _check_parent(user, client, agency_id, changes["parent_client_id"])
    elif client.parent_client_id and client.parent_client.agency_id != agency_id:
        raise ValidationError(
            {"parent_client_id": "The parent client must belong to the same agency."}
        )
    if "deleted" in changes:
        data.update(client.deletion_changes(changes["deleted"]))
    address_check(client, data, ADDRESSES)
    # Deleting or restoring a client changes the status of each of its live units too
    # (verification does not find a deleted client's units): watch them as well.
    units = []
    if moved or changes.get("deleted", was_deleted) != was_deleted:  # its units move along
        from apps.vehicles.selectors import live_unit_ids

        units = live_unit_ids(client_id=client.pk)
    if moved:  # its policies are updated (Client.save): locked before its units, as always
        rows_lock(Policy.objects.filter(client_id=client.pk))
    was = (client.agency_id, client.pk)  # where it was
    last_seen = record("client", client) if moved else None
    with status_watch(client_ids=[client.pk], vehicle_ids=units):
        _, changed = model_update(
            instance=client,
            fields=(*CLIENT_FIELDS, "agency", "producer", "parent_client", "deleted", "deleted_at"),
            data=data,
            user=user,
        )
        if not changed:
            return client  # nothing to announce: an event means the client's fields changed
        kind = "updated"
        if client.deleted != was_deleted:
            kind = "deleted" if client.deleted else "restored"
        # In the block: the client's event, then the statuses it changed (status_watch).
        record_event_emit(
            type=f"client.{kind}",
            gone_type="client.deleted",
            client=client,
            data=record("client", client),
            was=was,
            last_seen=last_seen,
        )
        if moved:
            # Its policies and units moved with it (Client.save). Producers and lienholders are
            # kept per agency: the old agency's are left behind, as the client's own producer
            # is, each policy and unit audited and announced after the client's event, to the
            # agency it is in now (the one it left sees nothing of the new one's records).
            policies_producer_clear(
                user=user, policies=client.policies.exclude(producer__agency_id=agency_id)
            )
            vehicles_lienholder_clear(
                user=user, vehicles=client.vehicles.exclude(lienholder__agency_id=agency_id)
            )
    return client


def producer_release(*, user, producer: Producer) -> None:
    """Before a producer's deletion (`apps.agencies.services.producer_delete`, in its
    transaction): the clients and the policies that name it keep none, each as its update
    service would leave it, with a history version and its `client.updated` or
    `policy.updated`; in bulk, the same statements for one record or many. The clients are
    locked first, those that name it and those whose policies do (the order every write
    takes)."""
    clients = Client.objects.filter(producer=producer)
    policies = Policy.objects.filter(producer=producer)
    rows_lock(Client.objects.filter(Q(producer=producer) | Q(pk__in=policies.values("client_id"))))
    cleared = list(clients.select_related(*CLIENT_RELATIONS).order_by("pk"))
    if cleared:
        links_clear(cleared, "producer", user=user)
        records_updated_emit(kind="client", objs=cleared)
    policies_producer_clear(user=user, policies=policies)
