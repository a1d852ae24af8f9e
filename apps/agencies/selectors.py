"""Reads for agencies and producers."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.agencies.models import Agency


def agency_list(*, user) -> QuerySet[Agency]:
    """The agencies a user may act for."""
    return Agency.objects.for_user(user).order_by("name", "id")


def agency_refs(*, user) -> list[tuple[int, str]]:
    """(id, name) of the agencies a user may act for, in `agency_list`'s order: those that
    authentication read with the caller (apps.accounts.principal), else one query. A superuser
    may act for every agency, not only those it is a member of: always the query."""
    refs = getattr(user, "_agency_refs", None)
    if refs is not None and not user.is_superuser:
        return refs
    return list(agency_list(user=user).values_list("id", "name"))
