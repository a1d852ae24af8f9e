"""Agencies, their producers, and which users may act for which agency."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import AgencyScopedQuerySet


class AgencyQuerySet(AgencyScopedQuerySet):
    agency_field = "id"


class Agency(models.Model):
    """An insurance agency: the unit of data isolation."""

    name = models.CharField(max_length=200, unique=True)
    address = models.CharField(max_length=300, blank=True)
    phone = models.CharField(max_length=40, blank=True)
    email = models.EmailField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AgencyQuerySet.as_manager()

    class Meta:
        ordering = ["name", "id"]
        verbose_name_plural = "agencies"

    def __str__(self) -> str:
        return self.name


class ProducerQuerySet(AgencyScopedQuerySet):
    agency_field = "agency"


class Producer(models.Model):
    """A producer (agent) of an agency, named on certificates."""

    agency = models.ForeignKey(Agency, on_delete=models.PROTECT, related_name="producers")
    name = models.CharField(max_length=200)
    contact_name = models.CharField(max_length=200, blank=True)
    address = models.CharField(max_length=300, blank=True)
    phone = models.CharField(max_length=40, blank=True)
    email = models.EmailField(blank=True)

    objects = ProducerQuerySet.as_manager()

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agency", "name"],
                name="%(app_label)s_%(class)s_unique_name_per_agency",
                violation_error_message="This agency already has a producer of that name.",
            )
        ]

    def __str__(self) -> str:
        return self.name


class AgencyMembershipQuerySet(AgencyScopedQuerySet):
    agency_field = "agency"


class AgencyMembership(models.Model):
    """Grants a user the right to act for an agency."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agency_memberships"
    )
    agency = models.ForeignKey(Agency, on_delete=models.CASCADE, related_name="memberships")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AgencyMembershipQuerySet.as_manager()

    class Meta:
        ordering = ["agency__name", "user__username"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "agency"],
                name="%(app_label)s_%(class)s_unique_user_agency",
                violation_error_message="The user is already a member of this agency.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.agency}"
