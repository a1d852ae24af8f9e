"""Reads of clients; agency scoping is applied here, once."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.clients.models import Client


def client_queryset(*, user) -> QuerySet[Client]:
    """Every client the user may see, with the relations its representation needs."""
    return Client.objects.for_user(user).select_related(
        "agency", "producer", "client_type", "state", "city", "mailing_state", "mailing_city"
    )
