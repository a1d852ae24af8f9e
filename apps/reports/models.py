"""Policy premium reports: a period's statement of what each scheduled unit costs."""

from __future__ import annotations

import datetime as dt

from django.db import models
from django.db.models import F, Q

from apps.core.models import AgencyScopedQuerySet, user_stamp
from apps.reports.prorata import Window, policy_term, report_year_days


class PolicyPremiumReportQuerySet(AgencyScopedQuerySet):
    agency_field = "policy__agency"


class PolicyPremiumReport(models.Model):
    """A premium report of one policy for one period, optionally frozen as a snapshot."""

    policy = models.ForeignKey(
        "policies.Policy", on_delete=models.PROTECT, related_name="premium_reports"
    )
    period_start = models.DateField()
    period_end = models.DateField(help_text="The last day of the period (inclusive).")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = user_stamp()
    snapshot = models.JSONField(null=True, blank=True, editable=False)
    snapshot_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The agency the snapshot was frozen under, whose producer and name it holds: shown only to
    # a viewer who acts for it (apps.reports.selectors.snapshot_shown_to). None: not frozen,
    # or that agency was deleted since (then only a superuser sees them).
    snapshot_agency = models.ForeignKey(
        "agencies.Agency",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        editable=False,
        related_name="+",
    )

    objects = PolicyPremiumReportQuerySet.as_manager()

    class Meta:
        ordering = ["-period_start", "-id"]
        verbose_name = "policy premium report"
        constraints = [
            models.CheckConstraint(
                condition=Q(period_end__gte=F("period_start")),
                name="%(app_label)s_%(class)s_period_in_order",
                violation_error_message="The period must end on or after its start.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.policy} {self.period_start:%Y-%m}"

    @property
    def period(self) -> Window:
        """Its period as a half-open window."""
        return Window(self.period_start, self.period_end + dt.timedelta(days=1))

    @property
    def policy_year_days(self) -> int:
        """The days of the policy year its period starts in (on the policy's term), which a
        unit's annual premium is divided by (a period across an anniversary divides the days
        after it by the next year's)."""
        return report_year_days(period=self.period, term=policy_term(self.policy))
