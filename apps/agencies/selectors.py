"""Reads for agencies and producers."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.agencies.models import Agency, Producer


def agency_list(*, user) -> QuerySet[Agency]:
    """The agencies a user may act for."""
    return Agency.objects.for_user(user).order_by("name", "id")


def producer_queryset(*, user) -> QuerySet[Producer]:
    return Producer.objects.for_user(user).select_related("agency")
