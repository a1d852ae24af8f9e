"""Reads of premium reports, and the computation of their raw data."""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict

from django.db.models import QuerySet

from apps.coverages.models import VehicleCoverage
from apps.policies.models import PolicyRate
from apps.policies.rating import annual_unit_premium
from apps.reports.models import PolicyPremiumReport
from apps.reports.prorata import ScheduledUnit, Window, policy_year_days, premium_mapping
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


def _term(policy) -> Window:
    end = policy.expiration_date
    if policy.cancellation_date is not None:
        end = min(end, policy.cancellation_date)
    return Window(policy.effective_date, end)


def _fixed_data(report: PolicyPremiumReport) -> dict:
    policy = report.policy
    client = policy.client
    return {
        "policy_id": policy.id,
        "policy_number": policy.policy_number,
        "insured": client.client_name,
        "dot": client.dot,
        "insurer": policy.insurer.name if policy.insurer_id else None,
        "naic": policy.insurer.naic if policy.insurer_id else None,
        "coverage_type": policy.coverage_type.code,
        "coverage_type_name": policy.coverage_type.name,
        "effective_date": policy.effective_date,
        "expiration_date": policy.expiration_date,
        "cancellation_date": policy.cancellation_date,
        "producer": policy.producer.name if policy.producer_id else None,
        "agency": client.agency.name,
        "period_start": report.period_start,
        "period_end": report.period_end,
        "policy_year_days": policy_year_days(policy.effective_date),
    }


def compute_raw_data(report: PolicyPremiumReport) -> dict:
    """fixedData, tableData and premiumMapping, computed now (three queries, any fleet size),
    as dates and Decimals: apps/reports/serializers.py renders them."""
    policy = report.policy
    period = Window(report.period_start, report.period_end + dt.timedelta(days=1))
    rates = {rate.unit_type_id: rate for rate in PolicyRate.objects.filter(policy_id=policy.id)}
    periods = (
        VehicleCoverage.objects.filter(policy_id=policy.id, policy_added_date__lt=period.end)
        .exclude(policy_removed_date__lte=period.start)
        .select_related("vehicle", "vehicle__make", "vehicle__unit_type")
        .order_by("vehicle__unit", "vehicle_id", "policy_added_date", "id")
    )
    units: OrderedDict[int, ScheduledUnit] = OrderedDict()
    for assignment in periods:
        vehicle = assignment.vehicle
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
        unit.periods.append((assignment.policy_added_date, assignment.policy_removed_date))
    rows = compute_rows(
        units.values(),
        period=period,
        term=_term(policy),
        year_days=policy_year_days(policy.effective_date),
    )
    return {
        "fixed_data": _fixed_data(report),
        "table_data": rows,
        "premium_mapping": premium_mapping(rows),
    }


def report_raw_data(report: PolicyPremiumReport) -> dict:
    """The stored snapshot when there is one, else the mapping computed now (render it with
    RawDataSerializer)."""
    if report.snapshot is not None:
        return {
            "report_id": report.id,
            "source": "snapshot",
            "snapshot_at": report.snapshot_at,
            **report.snapshot,
        }
    return {
        "report_id": report.id,
        "source": "computed",
        "snapshot_at": None,
        **compute_raw_data(report),
    }
