"""Reads for agencies and producers."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.agencies.models import Agency


def agency_list(*, user) -> QuerySet[Agency]:
    """The agencies a user may act for."""
    return Agency.objects.for_user(user).order_by("name", "id")
