"""Writes of premium reports."""

from __future__ import annotations

import datetime as dt
import re

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.core.dates import today
from apps.policies.models import Policy
from apps.reports.models import PolicyPremiumReport
from apps.reports.prorata import month_window
from apps.reports.selectors import REPORT_RELATIONS, report_data_compute
from apps.reports.serializers import ReportDataSerializer

# ASCII digits only: int() would also read "2026-1", "+2026-01" or other scripts' digits.
PERIOD = re.compile(r"[0-9]{4}-[0-9]{2}")


def parse_period(period: str | None) -> tuple[dt.date, dt.date]:
    """'YYYY-MM' (default: the current month) -> its first and last day; the one rule for a
    report's month, whoever asks (the admin's form, create_premium_report)."""
    if period is None:
        period = today().strftime("%Y-%m")
    try:
        window = month_window(period) if PERIOD.fullmatch(period) else None
    except (ValueError, TypeError):
        window = None
    if window is None:
        raise ValidationError({"period": "Expected YYYY-MM, a month from 0001-01 to 9999-11."})
    return window.start, window.end - dt.timedelta(days=1)


@transaction.atomic
def premium_report_create(
    *, user, policy: Policy, period: str | None = None, snapshot: bool = False
) -> PolicyPremiumReport:
    """A report of `policy` for the month `period`; `snapshot` freezes its mapping now."""
    start, end = parse_period(period)
    report = PolicyPremiumReport(policy=policy, period_start=start, period_end=end, created_by=user)
    report.full_clean()
    report.save()
    if snapshot:
        premium_report_snapshot(report=report)
    return report


@transaction.atomic
def premium_report_snapshot(*, report: PolicyPremiumReport) -> PolicyPremiumReport:
    """Freeze the computed mapping: later coverage changes no longer move it. A frozen report
    is never frozen again (ValidationError): its snapshot is what it answered when frozen. It
    records the agency it was frozen under, whose producer and name it shows only to that
    agency's staff (`snapshot_shown_to`).

    The report is read again under its row lock, so of two freezes at once the second waits
    for the first and finds it frozen (SQLite: writers take the lock when they begin)."""
    report = (
        PolicyPremiumReport.objects.select_for_update(of=("self",))
        .select_related(*REPORT_RELATIONS)
        .get(pk=report.pk)
    )
    if report.snapshot is not None:
        frozen_at = report.snapshot_at.astimezone(dt.UTC)
        raise ValidationError(
            f"Frozen already on {frozen_at:%Y-%m-%d %H:%M:%S} UTC; "
            "a frozen report is never frozen again."
        )
    report.snapshot = dict(ReportDataSerializer(report_data_compute(report)).data)
    report.snapshot_at = timezone.now()
    # The agency whose producer and name it froze (FixedDataSerializer: the client's agency).
    report.snapshot_agency_id = report.policy.client.agency_id
    report.save(update_fields=["snapshot", "snapshot_at", "snapshot_agency"])
    return report
