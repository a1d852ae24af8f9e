"""Reads of clients; agency scoping is applied here, once."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from apps.clients.models import Client


def client_queryset(*, user) -> QuerySet[Client]:
    """Every client the user may see, with the relations its representation needs."""
    return Client.objects.for_user(user).select_related(
        "agency", "producer", "client_type", "state", "city", "mailing_state", "mailing_city"
    )


def visible_client(user, client_id: int, *, field: str = "client_id") -> Client:
    """A live client the user may see, or a 400 naming the field (never a hint it exists)."""
    client = Client.objects.for_user(user).live().filter(pk=client_id).first()
    if client is None:
        raise ValidationError({field: "No client with this id."})
    return client
