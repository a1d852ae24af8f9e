"""Coverages (the spec's "coverage assignments"): a vehicle or driver scheduled on a policy.

A coverage is one period: it starts at `policy_added_date` and ends at `policy_removed_date`
(the effective date of a removal or decline). Periods are never overwritten: scheduling again
opens a new period, and every change is also written to the event log, so "was it covered on
D" always has an answer.
"""

from __future__ import annotations

import datetime as dt

from django.db import models
from django.db.models import F, Q
from simple_history.models import HistoricalRecords

from apps.core.models import AgencyScopedQuerySet, TimeStampedModel, is_live, user_stamp
from apps.coverages.choices import CoverageStatus
from apps.policies.models import in_force_q


def period_covers_q(on: dt.date, prefix: str = "") -> Q:
    """The period includes D: added on or before D, not removed on or before D (Python:
    `Coverage.covers_on`)."""
    return Q(**{f"{prefix}policy_added_date__lte": on}) & (
        Q(**{f"{prefix}policy_removed_date__isnull": True})
        | Q(**{f"{prefix}policy_removed_date__gt": on})
    )


def covered_q(on: dt.date, prefix: str = "") -> Q:
    """Covered on D: a period covering D under a policy in force on D (Python:
    `Coverage.covered_on`)."""
    return period_covers_q(on, prefix) & in_force_q(on, f"{prefix}policy__")


# A pair's latest period, first: its open one, else the one that ended last. Since a pair's
# periods follow one another (apps.coverages.services), that is also the latest by added date
# (what `GET /v1/policies/{id}/vehicles` shows); the open one first keeps the writes on it for
# pairs written before that rule.
LATEST_FIRST = (F("policy_removed_date").desc(nulls_first=True), "-policy_added_date", "-id")


class CoverageQuerySet(AgencyScopedQuerySet):
    """Vehicle and driver coverages, scoped through their policy's copy of its client's agency."""

    agency_field = "policy__agency"

    def covering_on(self, on: dt.date) -> CoverageQuerySet:
        """Periods that cover their unit on D (the policy's own force is checked separately)."""
        return self.filter(period_covers_q(on))

    def covered_on(self, on: dt.date) -> CoverageQuerySet:
        """Periods that cover their unit on D under a policy in force on D: coverage."""
        return self.filter(covered_q(on))


class Coverage(TimeStampedModel):
    """Abstract base: the period a vehicle or driver is scheduled on a policy, and its status."""

    policy_added_date = models.DateField()
    policy_removed_date = models.DateField(null=True, blank=True)
    coverage_status = models.PositiveSmallIntegerField(choices=CoverageStatus.choices)

    class Meta:
        abstract = True

    def covers_on(self, on: dt.date) -> bool:
        """The period includes D (SQL: `period_covers_q`)."""
        return self.policy_added_date <= on and (
            self.policy_removed_date is None or self.policy_removed_date > on
        )

    def covered_on(self, on: dt.date, *, unit_live: bool) -> bool:
        """Covered on D: the period includes D, its policy is in force on D, and its unit is
        live (`unit_live`: `is_live_unit(unit)`, which the caller has loaded). A deleted
        vehicle, or any unit of a deleted client, is covered by nothing, as verification finds
        no such unit (SQL: `covered_q`, on units read with `live("client")`)."""
        return unit_live and self.covers_on(on) and self.policy.in_force_on(on)


def is_live_unit(unit) -> bool:
    """A vehicle or driver is live: it and its client are not soft-deleted (a deleted client's
    units are gone with it). The one rule for a loaded unit, whatever reads it: the detail's
    `covered` and billing (`periods_covering`), a premium report's rows and the status of a
    unit just created (`apps.coverages.status`); SQL reads units with `live("client")`."""
    return is_live(unit, "client")


def periods_covering(unit, on: dt.date, periods=None) -> list:
    """The periods of a vehicle or driver that cover it on D (`Coverage.covered_on`: the period
    includes D, its policy is in force on D, the unit and its client are live). `periods`: the
    unit's periods with their policies, as the caller read them (default: its prefetched
    `coverages`); no query. The one place a loaded unit's coverage today is worked out."""
    live = is_live_unit(unit)
    periods = unit.coverages.all() if periods is None else periods
    return [period for period in periods if period.covered_on(on, unit_live=live)]


class VehicleCoverage(Coverage):
    """A period during which a vehicle is a scheduled unit of a policy."""

    vehicle = models.ForeignKey(
        "vehicles.Vehicle", on_delete=models.PROTECT, related_name="coverages"
    )
    policy = models.ForeignKey(
        "policies.Policy", on_delete=models.PROTECT, related_name="vehicle_coverages"
    )

    objects = CoverageQuerySet.as_manager()
    history = HistoricalRecords(excluded_fields=["updated_at"], inherit=False)

    class Meta:
        ordering = ["policy_added_date", "id"]
        indexes = [
            models.Index(fields=["vehicle", "policy"], name="coverages_vehicle_policy_idx"),
            # A policy's units by added date, then unit id: GET /v1/policies/{id}/vehicles
            # pages a 250,000-unit policy from either end without sorting it (issue 18).
            models.Index(
                fields=["policy", "policy_added_date", "vehicle"],
                name="coverages_vpolicy_vehicle_idx",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["vehicle", "policy"],
                condition=Q(policy_removed_date__isnull=True),
                name="%(app_label)s_%(class)s_one_open_period",
                violation_error_message="The unit is already scheduled on this policy.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.vehicle} on {self.policy}"


class DriverCoverage(Coverage):
    """A period during which a driver is a sponsored scheduled driver of an OA/DD policy."""

    driver = models.ForeignKey("drivers.Driver", on_delete=models.PROTECT, related_name="coverages")
    policy = models.ForeignKey(
        "policies.Policy", on_delete=models.PROTECT, related_name="driver_coverages"
    )

    objects = CoverageQuerySet.as_manager()
    history = HistoricalRecords(excluded_fields=["updated_at"], inherit=False)

    class Meta:
        ordering = ["policy_added_date", "id"]
        indexes = [
            models.Index(fields=["driver", "policy"], name="coverages_driver_policy_idx"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["driver", "policy"],
                condition=Q(policy_removed_date__isnull=True),
                name="%(app_label)s_%(class)s_one_open_period",
                violation_error_message="The driver is already scheduled on this policy.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.driver} on {self.policy}"


class CoverageEventQuerySet(AgencyScopedQuerySet):
    agency_field = "policy__agency"


class CoverageEvent(models.Model):
    """One change of a coverage, kept forever: the audit of who changed coverage when."""

    vehicle_coverage = models.ForeignKey(
        VehicleCoverage, null=True, blank=True, on_delete=models.CASCADE, related_name="events"
    )
    driver_coverage = models.ForeignKey(
        DriverCoverage, null=True, blank=True, on_delete=models.CASCADE, related_name="events"
    )
    policy = models.ForeignKey("policies.Policy", on_delete=models.PROTECT, related_name="+")
    coverage_status = models.PositiveSmallIntegerField(choices=CoverageStatus.choices)
    effective_date = models.DateField()
    policy_added_date = models.DateField()
    policy_removed_date = models.DateField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = user_stamp()

    objects = CoverageEventQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(vehicle_coverage__isnull=False, driver_coverage__isnull=True)
                | Q(vehicle_coverage__isnull=True, driver_coverage__isnull=False),
                name="%(app_label)s_%(class)s_one_subject",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_coverage_status_display()} from {self.effective_date}"
