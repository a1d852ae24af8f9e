"""Writes of requirement profiles: every rule about a profile lives here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models.deletion import ProtectedError, RestrictedError
from django.utils.text import slugify

from apps.agencies.models import Agency
from apps.compliance.models import RequirementProfile
from apps.compliance.monitoring import compliance_profile_watch
from apps.compliance.rules import (
    FEDERAL_MINIMUM_CODE,
    FEDERAL_MINIMUM_NAME,
    FEDERAL_MINIMUM_RULES,
    rules_clean,
)
from apps.core.exceptions import Conflict
from apps.core.models import agency_ids_for


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


def _agency_for_create(user, agency_id: int | None) -> Agency:
    """The profile's agency: named, or implied when the caller acts for exactly one."""
    allowed = agency_ids_for(user)
    if agency_id is None:
        if allowed is not None and len(allowed) == 1:
            agency_id = allowed[0]
        else:
            raise ValidationError({"agency_id": "Name the agency: you act for several."})
    if allowed is not None and agency_id not in allowed:
        raise PermissionDenied("You are not authorized for this agency.")
    agency = Agency.objects.filter(pk=agency_id).first()
    if agency is None:
        raise ValidationError({"agency_id": "Unknown agency."})
    return agency


def _check_code_free(profile: RequirementProfile) -> None:
    taken = (
        RequirementProfile.objects.filter(agency_id=profile.agency_id, code=profile.code)
        .exclude(pk=profile.pk)
        .exists()
    )
    if taken:
        raise Conflict(f"This agency already has a profile with the code '{profile.code}'.")


def _code_from_name(name: str) -> str:
    code = slugify(name)[:50].strip("-") or "profile"
    return f"profile-{code}" if code.isdigit() else code


@transaction.atomic
def requirement_profile_create(*, user, data: dict[str, Any]) -> RequirementProfile:
    """Create a profile in one of the caller's agencies; the code defaults to the name's slug."""
    agency = _agency_for_create(user, data.get("agency_id"))
    profile = RequirementProfile(
        agency=agency,
        name=data["name"],
        code=data.get("code") or _code_from_name(data["name"]),
        rules=rules_clean(data["rules"]),
        created_by=user,
        updated_by=user,
    )
    _check_code_free(profile)
    profile.full_clean(validate_constraints=False)
    profile.save()
    return profile


@transaction.atomic
def requirement_profile_update(
    *, user, instance: RequirementProfile, data: dict[str, Any]
) -> RequirementProfile:
    """Partial update of name, code and rules; the built-in profile is the law's, not ours."""
    profile = RequirementProfile.objects.select_for_update().get(pk=instance.pk)
    if profile.built_in:
        raise Conflict("The built-in federal-minimum profile cannot be changed.")
    if "agency_id" in data and data["agency_id"] != profile.agency_id:
        raise ValidationError({"agency_id": "A profile cannot move to another agency."})
    if "name" in data:
        profile.name = data["name"]
    if data.get("code"):
        profile.code = data["code"]
    if "rules" in data:
        profile.rules = rules_clean(data["rules"])
    _check_code_free(profile)
    profile.updated_by = user
    profile.full_clean(validate_constraints=False)
    # New rules can change every watched client's verdict: compliance.changed for each.
    with compliance_profile_watch(profile_id=profile.pk, agency_id=profile.agency_id):
        profile.save()
    return profile


@transaction.atomic
def requirement_profile_delete(*, user, instance: RequirementProfile) -> None:
    """Delete a profile no one depends on; the built-in one stays."""
    if instance.built_in:
        raise Conflict("The built-in federal-minimum profile cannot be deleted.")
    try:
        instance.delete()
    except (ProtectedError, RestrictedError) as exc:
        raise Conflict("The profile is in use (a webhook subscription names it).") from exc
