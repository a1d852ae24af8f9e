"""Reads of requirement profiles; agency scoping is applied here, once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import QuerySet

from apps.compliance.evaluation import CompiledProfile
from apps.compliance.models import RequirementProfile
from apps.core.params import is_ascii_int
from apps.webhooks.models import Webhook


def requirement_profile_queryset(*, user) -> QuerySet[RequirementProfile]:
    """Every profile of the agencies the user may act for."""
    return RequirementProfile.objects.for_user(user).select_related("agency")


def requirement_profiles_named(*, profile_ids: Iterable[int]) -> dict[int, RequirementProfile]:
    """The profiles these ids name (a page of subscriptions' `profile_id`s), by id: one query.
    The caller's rows are scoped already; a profile is in its subscription's agency."""
    ids = {pk for pk in profile_ids if pk is not None}
    return RequirementProfile.objects.in_bulk(ids) if ids else {}


def profile_subscriptions(*, profile_ids: list[int]) -> QuerySet[Webhook]:
    """The webhook subscriptions that name one of the profiles: they keep it in use."""
    # A subscription names its profile by id (no foreign key), in the profile's own agency.
    return Webhook.objects.filter(profile_id__in=profile_ids).order_by("id")


@dataclass(frozen=True)
class ProfileChoice:
    """The profile a verification names, per agency when it was named by code.

    `profile=federal-minimum` from a user of two agencies means each client's own agency's
    built-in profile; a code only one visible agency has applies to every result.
    """

    by_agency: dict[int, CompiledProfile]
    fallback: CompiledProfile

    def for_agency(self, agency_id: int) -> CompiledProfile:
        return self.by_agency.get(agency_id, self.fallback)

    @property
    def notices(self) -> bool:
        """Whether a profile it names has an expiration notice (which looks for renewals)."""
        return any(c.notice_days is not None for c in (self.fallback, *self.by_agency.values()))


def requirement_profile_resolve(*, user, ref: str) -> ProfileChoice | None:
    """The visible profile(s) `ref` (an id or a code) names, or None: one query."""
    ref = ref.strip()
    profiles = requirement_profile_queryset(user=user)
    if is_ascii_int(ref):
        if len(ref) > 18:
            return None
        found = list(profiles.filter(pk=int(ref)))
    else:
        found = list(profiles.filter(code=ref.lower()).order_by("id"))
    if not found:
        return None
    compiled = [CompiledProfile.of(p) for p in found]
    if len(found) == 1:
        return ProfileChoice(by_agency={}, fallback=compiled[0])
    return ProfileChoice(
        by_agency={p.agency_id: c for p, c in zip(found, compiled, strict=True)},
        fallback=compiled[0],
    )
