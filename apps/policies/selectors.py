"""Reads of policies; agency scoping and the derived status are applied here."""

from __future__ import annotations

import datetime as dt

from django.db.models import Count, Prefetch, Q, QuerySet

from apps.core.dates import today
from apps.core.models import live_q
from apps.policies.models import Policy, PolicyLimit, in_force_q


def with_representation(policies: QuerySet[Policy], on: dt.date) -> QuerySet[Policy]:
    """These policies with their status on `on` and what the API's representation of each
    reads (their relations and their limits in order), in two queries whatever their number."""
    return (
        policies.with_status(on)
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


def policy_queryset(*, user, on: dt.date | None = None) -> QuerySet[Policy]:
    """Every policy the user may see, annotated with its status on `on` (default today)."""
    return with_representation(Policy.objects.for_user(user), on or today())


def live_policies_naming(naming: Q) -> QuerySet[Policy]:
    """The live policies of live clients that `naming` selects (those of an insurer renamed),
    in every agency, as the API shows them today, in id order: the records a change of a row
    they show announces (apps.events.records, `shows`). A deleted policy, or one of a deleted
    client, is not announced: neither verification nor the lists show it, and its restoration's
    event carries it as it is then."""
    return with_representation(Policy.objects.live("client").filter(naming), today()).order_by("id")


def client_policy_counts(client_ids: list[int], on: dt.date) -> dict[int, tuple[int, bool]]:
    """For each of these clients with policies: (its live policies, whether one is in force on
    D), by the one definition of each (`live_q`, `in_force_q`), in one statement over their own
    policies. For a page of clients (the admin's list): annotated on an agency's list, both were
    computed for every client of the agency before the page's first row (issue 18)."""
    rows = (
        Policy.objects.filter(client_id__in=list(client_ids))
        .order_by()
        .values("client_id")
        .annotate(live=Count("id", filter=live_q()), in_force=Count("id", filter=in_force_q(on)))
        .values_list("client_id", "live", "in_force")
    )
    return {client_id: (live, in_force > 0) for client_id, live, in_force in rows}
