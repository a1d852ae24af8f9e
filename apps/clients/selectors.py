"""Reads of clients; agency scoping is applied here, once."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet

from apps.clients.models import Client

# The relations the API's representation of a client reads.
CLIENT_RELATIONS = (
    "agency",
    "producer",
    "client_type",
    "state",
    "city",
    "mailing_state",
    "mailing_city",
)


def client_queryset(*, user) -> QuerySet[Client]:
    """Every client the user may see, with the relations its representation needs."""
    return Client.objects.for_user(user).select_related(*CLIENT_RELATIONS)


def live_clients_naming(naming: Q) -> QuerySet[Client]:
    """The live clients that `naming` selects (those of an agency renamed), with what their
    representation reads, in id order: the records a change of a row they show announces
    (apps.events.records, `shows`). A deleted client is not announced: verification does not
    find it, and its restoration's event carries it as it is then."""
    return Client.objects.live().filter(naming).select_related(*CLIENT_RELATIONS).order_by("id")


def visible_client(user, client_id: int, *, field: str = "client_id", lock: bool = True) -> Client:
    """A live client the user may see, or a 400 naming the field (never a hint it exists).
    For the write that names it (in its transaction): the client's row is locked, so a
    deletion or a move of the client and this write come one after the other, and a client
    deleted meanwhile is no longer live here (a policy or unit created on it answered 201).
    `lock=False` for a client named only to be refused (another than the one the write locked
    first): no second client's lock, taken out of the order every write takes them in."""
    clients = Client.objects.for_user(user).live()
    if lock:
        clients = clients.select_for_update(no_key=True, of=("self",))
    client = clients.filter(pk=client_id).first()
    if client is None:
        raise ValidationError({field: "No client with this id."})
    return client
