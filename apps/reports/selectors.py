"""Reads of premium reports, and the computation of their raw data."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from apps.core.models import acts_for
from apps.coverages.models import VehicleCoverage, is_live_unit
from apps.policies.models import PolicyRate
from apps.policies.rating import annual_unit_premium
from apps.reports.models import PolicyPremiumReport
from apps.reports.prorata import (
    PremiumMapping,
    PremiumRow,
    ScheduledUnit,
    policy_term,
    premium_mapping,
)
from apps.reports.prorata import premium_rows as compute_rows

# What a report shows of its policy, read with it.
REPORT_RELATIONS = (
    "policy",
    "policy__client",
    "policy__client__agency",
    "policy__coverage_type",
    "policy__insurer",
    "policy__producer",
)


def report_queryset(*, user) -> QuerySet[PolicyPremiumReport]:
    return PolicyPremiumReport.objects.for_user(user).select_related(*REPORT_RELATIONS)


@dataclass(frozen=True)
class ReportData:
    """A report's data computed now, in dates and Decimals (ReportDataSerializer renders it).
    The fixed data is the report itself: FixedDataSerializer reads its policy and period."""

    fixed_data: PolicyPremiumReport
    table_data: list[PremiumRow]
    premium_mapping: PremiumMapping


@dataclass(frozen=True)
class RawData:
    """The raw-data answer (RawDataSerializer): where the data comes from, then the data, a
    snapshot as stored (ReportDataSerializer's output, frozen) or a ReportData computed now."""

    report_id: int
    source: str  # "snapshot" or "computed"
    snapshot_at: dt.datetime | None
    data: ReportData | Mapping[str, Any]


def report_data_compute(report: PolicyPremiumReport) -> ReportData:
    """The report's data computed now (three queries, any fleet size). It bills the units the
    vehicle detail bills: a live unit of a live client (`is_live_unit`); a deleted unit, or a
    unit of a deleted client, has no row, as verification does not find it."""
    policy = report.policy
    period = report.period
    rates = {rate.unit_type_id: rate for rate in PolicyRate.objects.filter(policy_id=policy.id)}
    periods = (
        VehicleCoverage.objects.filter(policy_id=policy.id, policy_added_date__lt=period.end)
        .exclude(policy_removed_date__lte=period.start)
        .select_related("vehicle__client", "vehicle__make", "vehicle__unit_type")
        .order_by("vehicle__unit", "vehicle_id", "policy_added_date", "id")
    )
    units: dict[int, ScheduledUnit] = {}
    for coverage in periods:
        vehicle = coverage.vehicle
        if not is_live_unit(vehicle):
            continue
        unit = units.get(vehicle.id)
        if unit is None:
            unit = units[vehicle.id] = ScheduledUnit(
                vehicle_id=vehicle.id,
                unit=vehicle.unit,
                model_year=vehicle.model_year,
                make=vehicle.make.name,
                vin=vehicle.serial_number,
                unit_type=vehicle.unit_type.name,
                stated_value=vehicle.stated_value,
                annual_premium=annual_unit_premium(
                    rates.get(vehicle.unit_type_id), vehicle.stated_value
                ),
            )
        unit.periods.append((coverage.policy_added_date, coverage.policy_removed_date))
    rows = compute_rows(units.values(), period=period, term=policy_term(policy))
    return ReportData(fixed_data=report, table_data=rows, premium_mapping=premium_mapping(rows))


# What a snapshot froze of the agency it was frozen under (fixedData): the policy's producer,
# which a client moving to another agency leaves behind, and the agency's name.
AGENCY_FIXED_DATA = ("producer", "agency")


def snapshot_shown_to(report: PolicyPremiumReport, *, user) -> Mapping[str, Any]:
    """The report's snapshot as `user` may read it: as stored, but for its producer and agency
    name, which are the agency's it was frozen under (`snapshot_agency`): null to a viewer who
    does not act for that agency (`acts_for`; a superuser acts for every one), as a who field
    names only the people of the viewer's agencies (apps.core.people). The snapshot itself is
    never rewritten. The one rule for every page that shows a snapshot."""
    snapshot = report.snapshot
    if acts_for(user, report.snapshot_agency_id):
        return snapshot
    fixed_data = {**snapshot["fixed_data"], **dict.fromkeys(AGENCY_FIXED_DATA)}
    return {**snapshot, "fixed_data": fixed_data}


def report_raw_data(report: PolicyPremiumReport, *, user) -> RawData:
    """The stored snapshot when there is one (`snapshot_shown_to` the user), else the data
    computed now."""
    if report.snapshot is not None:
        snapshot = snapshot_shown_to(report, user=user)
        return RawData(report.id, "snapshot", report.snapshot_at, snapshot)
    return RawData(report.id, "computed", None, report_data_compute(report))
