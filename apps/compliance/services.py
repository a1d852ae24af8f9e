"""Writes of requirement profiles: every rule about a profile lives here."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypedDict, Unpack

from django.db import transaction
from django.utils.text import slugify

from apps.agencies.services import agency_kept, authorized_agency
from apps.compliance.models import RequirementProfile
from apps.compliance.monitoring import (
    clients_insured_by,
    compliance_profile_watch,
    compliance_watch,
)
from apps.compliance.rules import (
    FEDERAL_MINIMUM_CODE,
    FEDERAL_MINIMUM_NAME,
    FEDERAL_MINIMUM_RULES,
    rules_clean,
)
from apps.compliance.selectors import profile_subscriptions
from apps.core.exceptions import Conflict
from apps.core.services import delete_unused, model_update
from apps.masterdata.models import Insurer
from apps.masterdata.services import InsurerFields, masterdata_update


def federal_minimum_ensure(*, agency_ids: Iterable[int]) -> int:
    """Give each agency its built-in federal-minimum profile if it has none; how many were
    made. Called when an agency is created (whatever creates it) and by the demo seed."""
    ids = set(agency_ids)
    have = set(
        RequirementProfile.objects.filter(agency_id__in=ids, built_in=True).values_list(
            "agency_id", flat=True
        )
    )
    missing = sorted(ids - have)
    RequirementProfile.objects.bulk_create(
        [
            RequirementProfile(
                agency_id=pk,
                name=FEDERAL_MINIMUM_NAME,
                code=FEDERAL_MINIMUM_CODE,
                rules=FEDERAL_MINIMUM_RULES,
                built_in=True,
            )
            for pk in missing
        ]
    )
    return len(missing)


def _code_from_name(name: str, agency_id: int) -> str:
    """The name's slug ("profile" for a name with no ASCII letter or digit), numbered from 2
    when the agency has it already: the caller sent no code, so none of theirs can clash."""
    # A slug keeps underscores and runs of dashes, which a code does not take.
    base = re.sub(r"[-_]+", "-", slugify(name))[:50].strip("-") or "profile"
    if base.isdigit():
        base = f"profile-{base}"[:50]
    taken = set(
        RequirementProfile.objects.filter(
            agency_id=agency_id, code__startswith=base[:40]
        ).values_list("code", flat=True)
    )
    code, number = base, 1
    while code in taken:
        number += 1
        suffix = f"-{number}"
        code = base[: 50 - len(suffix)].rstrip("-") + suffix
    return code


@transaction.atomic
def requirement_profile_create(
    *, user, name: str, rules: list, code: str = "", agency_id: int | None = None
) -> RequirementProfile:
    """Create a profile in one of the caller's agencies; the code defaults to the name's slug
    (numbered when the agency has that code already)."""
    agency = authorized_agency(user, agency_id, implied=True)
    profile = RequirementProfile(
        agency=agency,
        name=name,
        code=code or _code_from_name(name, agency.pk),
        rules=rules_clean(rules),
        created_by=user,
        updated_by=user,
    )
    profile.full_clean()
    profile.save()
    return profile


class RequirementProfileChanges(TypedDict, total=False):
    name: str
    code: str  # empty: unchanged
    rules: list
    agency_id: int  # its own agency only: a profile does not move


@transaction.atomic
def requirement_profile_update(
    *, user, instance: RequirementProfile, **changes: Unpack[RequirementProfileChanges]
) -> RequirementProfile:
    """Partial update of name, code and rules; the built-in profile is the law's, not ours."""
    profile = RequirementProfile.objects.select_for_update().get(pk=instance.pk)
    if profile.built_in:
        raise Conflict("The built-in federal-minimum profile cannot be changed.")
    agency_kept(user, profile, changes.get("agency_id"), noun="profile")
    data: dict = {**changes}
    if not data.get("code"):
        data.pop("code", None)
    if "rules" in data:
        data["rules"] = rules_clean(data["rules"])
    # New rules can change every watched client's verdict: compliance.changed for each.
    with compliance_profile_watch(profile_id=profile.pk, agency_id=profile.agency_id):
        model_update(
            instance=profile,
            fields=("name", "code", "rules"),
            data=data,
            user=user,
        )
    return profile


@transaction.atomic
def requirement_profile_delete(*, user, instance: RequirementProfile) -> None:
    """Delete a profile no one depends on; the built-in one stays."""
    if instance.built_in:
        raise Conflict("The built-in federal-minimum profile cannot be deleted.")
    in_use = "The profile is in use (a webhook subscription names it)."
    # Looked for with the profile locked, as a subscription naming it locks it
    # (apps.webhooks.services._check).
    RequirementProfile.objects.select_for_update().filter(pk=instance.pk).exists()
    if profile_subscriptions(profile_ids=[instance.pk]).exists():
        raise Conflict(in_use)
    delete_unused(instance, in_use)


@transaction.atomic
def insurer_update(*, user, instance: Insurer, **changes: Unpack[InsurerFields]) -> Insurer:
    """Master data's update of an insurer, watched: a new AM Best rating can change the
    verdict of every client it covers (rule `insurer_rating`), announced as
    `compliance.changed`. A new insurer covers no one yet: `masterdata_create` adds it."""
    with compliance_watch(client_ids=clients_insured_by(instance.pk)):
        return masterdata_update(user=user, instance=instance, **changes)
