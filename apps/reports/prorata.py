"""Pro-rata premium arithmetic, free of the database so it can be checked by hand and by
property tests.

A unit's premium for a period is its annual premium times the days it was scheduled inside
both the period and the policy term, divided by the days of the policy year (365, or 366 when
the year from the effective date holds a February 29th). Each row is rounded half-up to the
cent; totals are sums of the rounded rows, so they always add up. Amounts stay Decimals
here; the report's serializers (apps/reports/serializers.py) turn them into text, once.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from apps.core.money import ZERO, round_money


@dataclass(frozen=True)
class Window:
    """A half-open span of days: start <= day < end."""

    start: dt.date
    end: dt.date

    def overlap_days(self, other: Window) -> int:
        start, end = max(self.start, other.start), min(self.end, other.end)
        return max(0, (end - start).days)

    def intersect(self, other: Window) -> Window:
        return Window(max(self.start, other.start), min(self.end, other.end))


@dataclass
class ScheduledUnit:
    """A vehicle and the periods it was scheduled on the policy."""

    vehicle_id: int
    unit: str
    model_year: int
    make: str
    vin: str
    unit_type: str
    stated_value: Decimal | None
    annual_premium: Decimal
    periods: list[tuple[dt.date, dt.date | None]] = field(default_factory=list)


def policy_year_days(effective: dt.date) -> int:
    """Days in the year that starts on the effective date (to its anniversary; a February
    29th's is March 1st): 366 when that year holds a February 29th. Counted from the calendar,
    not by building the anniversary, which a policy of the year 9999 does not have."""
    year = effective.year
    this_years = calendar.isleap(year) and (effective.month, effective.day) <= (2, 29)
    next_years = calendar.isleap(year + 1) and effective.month > 2
    return 366 if this_years or next_years else 365


def month_window(period: str) -> Window:
    """'2026-11' -> November 2026 as a half-open window."""
    year, month = (int(part) for part in period.split("-"))
    start = dt.date(year, month, 1)
    end = dt.date(year + (month == 12), month % 12 + 1, 1)
    return Window(start, end)


@dataclass(frozen=True)
class PremiumRow:
    """A unit's line of the report: the unit, the days it was on the policy inside the period
    and the term (the union of its periods there, first added to last removed), its premium."""

    unit: ScheduledUnit
    policy_added_date: dt.date
    policy_removed_date: dt.date | None
    days_on_policy: int
    premium: Decimal


@dataclass
class UnitTypeTotal:
    """The rows of one unit type: how many, and the sum of their premiums."""

    unit_count: int = 0
    premium: Decimal = ZERO


@dataclass(frozen=True)
class PremiumMapping:
    """Totals that are exactly the sums of the rows, in all and by unit type (sorted by name)."""

    total_premium: Decimal
    earned_premium: Decimal
    unit_count: int
    by_unit_type: dict[str, UnitTypeTotal]


def premium_rows(
    units: Iterable[ScheduledUnit], *, period: Window, term: Window, year_days: int
) -> list[PremiumRow]:
    """One row per unit scheduled at least one day inside both the period and the term."""
    inside = period.intersect(term)
    rows = []
    for unit in units:
        relevant = [
            (added, removed or dt.date.max)
            for added, removed in unit.periods
            if Window(added, removed or dt.date.max).overlap_days(inside) > 0
        ]
        # Count the union of the periods, so overlapping periods never count a day twice.
        days, cursor = 0, inside.start
        for start, end in sorted(relevant):
            days += Window(max(start, cursor), end).overlap_days(inside)
            cursor = max(cursor, min(end, inside.end))
        if days == 0:
            continue
        last_end = max(end for _, end in relevant)
        rows.append(
            PremiumRow(
                unit=unit,
                policy_added_date=min(start for start, _ in relevant),
                policy_removed_date=None if last_end == dt.date.max else last_end,
                days_on_policy=days,
                premium=round_money(unit.annual_premium * days / Decimal(year_days)),
            )
        )
    return rows


def premium_mapping(rows: list[PremiumRow]) -> PremiumMapping:
    """Totals that are exactly the sums of the rows."""
    by_type: dict[str, UnitTypeTotal] = {}
    total = ZERO
    for row in rows:
        total += row.premium
        bucket = by_type.setdefault(row.unit.unit_type, UnitTypeTotal())
        bucket.unit_count += 1
        bucket.premium += row.premium
    return PremiumMapping(
        total_premium=total,
        earned_premium=total,
        unit_count=len(rows),
        by_unit_type=dict(sorted(by_type.items())),
    )
