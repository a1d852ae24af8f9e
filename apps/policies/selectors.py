"""Reads of policies; agency scoping and the derived status are applied here."""

from __future__ import annotations

import datetime as dt

from django.db.models import Prefetch, QuerySet

from apps.core.dates import today
from apps.policies.models import Policy, PolicyLimit


def policy_queryset(*, user, on: dt.date | None = None) -> QuerySet[Policy]:
    """Every policy the user may see, annotated with its status on `on` (default today)."""
    return (
        Policy.objects.for_user(user)
        .with_status(on or today())
        .select_related(
            "client",
            "client__agency",
            "coverage_type",
            "insurer",
            "state",
            "producer",
            "created_by",
            "updated_by",
        )
        .prefetch_related(
            Prefetch("limits", queryset=PolicyLimit.objects.order_by("position", "id"))
        )
    )
