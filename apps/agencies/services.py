"""Writes of agencies, their producers and memberships, and who may write for an agency."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError

from apps.agencies.models import Agency
from apps.core.models import agency_ids_for


def authorized_agency(user, agency_id: int | None, *, implied: bool = False) -> Agency:
    """The agency a write names; any agency outside the caller's is 403, existing or not.

    With `implied`, naming none means the caller's only agency (a 400 when they act for
    several, or for all as a superuser does).
    """
    allowed = agency_ids_for(user)
    if agency_id is None:
        if implied and allowed is not None and len(allowed) == 1:
            agency_id = allowed[0]
        else:
            raise ValidationError({"agency_id": "Name the agency: you act for several."})
    if allowed is not None and agency_id not in allowed:
        raise PermissionDenied("You are not authorized for this agency.")
    agency = Agency.objects.filter(pk=agency_id).first()
    if agency is None:
        raise ValidationError({"agency_id": "Unknown agency."})
    return agency
