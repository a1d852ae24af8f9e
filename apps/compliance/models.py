"""Requirement profiles: what an agency's shippers and brokers demand of a carrier."""

from __future__ import annotations

from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q

from apps.core.models import AgencyScopedQuerySet, TimeStampedModel

# A code is what `profile=` names besides the id, so it can never look like an id.
code_validator = RegexValidator(
    r"^(?![0-9]+$)[a-z0-9]+(?:-[a-z0-9]+)*$",
    "A code is lower-case letters, digits and dashes (not digits alone), such as "
    "'shipper-contract'.",
    code="invalid",
)


class RequirementProfileQuerySet(AgencyScopedQuerySet):
    agency_field = "agency"


class RequirementProfile(TimeStampedModel):
    """A named set of rules a client's coverages are checked against at verification."""

    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.CASCADE, related_name="requirement_profiles"
    )
    name = models.CharField(max_length=200)
    code = models.CharField(
        max_length=50,
        validators=[code_validator],
        help_text="What `profile=` may name instead of the id; unique in the agency.",
    )
    rules = models.JSONField(default=list)
    built_in = models.BooleanField(
        default=False, editable=False, help_text="The agency's federal-minimum profile."
    )

    objects = RequirementProfileQuerySet.as_manager()

    class Meta:
        ordering = ["agency", "name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agency", "code"],
                name="%(app_label)s_%(class)s_unique_code_per_agency",
                violation_error_message="This agency already has a profile with the code '{code}'.",
            ),
            models.UniqueConstraint(
                fields=["agency"],
                condition=Q(built_in=True),
                name="%(app_label)s_%(class)s_one_built_in_per_agency",
                violation_error_message="An agency has one built-in profile.",
            ),
        ]

    def __str__(self) -> str:
        return self.name
