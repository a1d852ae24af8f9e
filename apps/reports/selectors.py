"""Reads of premium reports, and the computation of their raw data."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

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


def report_raw_data(report: PolicyPremiumReport) -> RawData:
    """The stored snapshot when there is one, else the data computed now."""
    if report.snapshot is not None:
        return RawData(report.id, "snapshot", report.snapshot_at, report.snapshot)
    return RawData(report.id, "computed", None, report_data_compute(report))
