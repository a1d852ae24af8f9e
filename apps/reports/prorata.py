"""Pro-rata premium arithmetic, free of the database so it can be checked by hand and by
property tests.

A unit's premium for a period is its annual premium times the days it was scheduled inside
both the period and the policy term, divided by the days of the policy year they are in (365,
or 366 when that year holds a February 29th). Policy years run from one anniversary of the
effective date to the next, so a term of several years has years of either length; a period
across an anniversary counts the days on each side over their own year. Each row is rounded
half-up to the cent, once; totals are sums of the rounded rows, so they always add up.
Amounts stay Decimals here; the report's serializers (apps/reports/serializers.py) turn them
into text, once.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

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


def policy_term(policy) -> Window:
    """A policy's term: its effective date to its end (`Policy.ends_on`: the expiration, or a
    cancellation that comes first)."""
    return Window(policy.effective_date, policy.ends_on)


def anniversary(effective: dt.date, year: int) -> dt.date:
    """The effective date's anniversary in `year`: the same day, or March 1st for a February
    29th in a year without one (a February 29th's anniversary in a leap year is February
    29th). ValueError past the year 9999."""
    if (effective.month, effective.day) == (2, 29) and not calendar.isleap(year):
        return dt.date(year, 3, 1)
    return effective.replace(year=year)


def policy_year_of(effective: dt.date, day: dt.date) -> int:
    """The year of the anniversary that starts the policy year holding `day` (the first
    year's for a day before the effective date)."""
    if day < effective:
        return effective.year
    return day.year if day >= anniversary(effective, day.year) else day.year - 1


def _year_days(effective: dt.date, year: int) -> int:
    # The days from the anniversary in `year` to the next: 366 when a February 29th lies
    # between, that of `year` (the anniversary falls in January or February) or of the next
    # (it falls later). Counted from the calendar, not by building the next anniversary,
    # which a policy year starting in 9999 does not have.
    this_years = calendar.isleap(year) and effective.month <= 2
    next_years = calendar.isleap(year + 1) and effective.month > 2
    return 366 if this_years or next_years else 365


def policy_year_days(effective: dt.date, on: dt.date) -> int:
    """Days of the policy year holding `on` (the first year for a day before the effective
    date; a February 29th's anniversary is March 1st in a year without one): 366 when that
    year holds a February 29th."""
    return _year_days(effective, policy_year_of(effective, on))


def policy_year_pieces(effective: dt.date, window: Window) -> list[tuple[Window, int]]:
    """`window` cut at the effective date's anniversaries: each piece with the days of the
    policy year it is in (one piece unless the window holds an anniversary)."""
    pieces, start = [], window.start
    year = policy_year_of(effective, start)
    while start < window.end:
        try:
            next_year_starts = anniversary(effective, year + 1)
        except ValueError:  # past 9999-12-31: no window reaches it
            next_year_starts = dt.date.max
        end = min(window.end, next_year_starts)
        pieces.append((Window(start, end), _year_days(effective, year)))
        start, year = end, year + 1
    return pieces


def report_year_days(*, period: Window, term: Window) -> int:
    """The policy year days a report shows: those of the year holding the period's first day
    on the term (its nearest day on the term when the period is outside it)."""
    first = max(period.start, term.start)
    if term.end > term.start:
        first = min(first, term.end - dt.timedelta(days=1))
    return policy_year_days(term.start, on=first)


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
    units: Iterable[ScheduledUnit], *, period: Window, term: Window
) -> list[PremiumRow]:
    """One row per unit scheduled at least one day inside both the period and the term, its
    days priced over the policy years they are in (counted from the term's start, the
    effective date)."""
    inside = period.intersect(term)
    pieces = policy_year_pieces(term.start, inside)
    rows = []
    for unit in units:
        relevant = [
            (added, removed or dt.date.max)
            for added, removed in unit.periods
            if Window(added, removed or dt.date.max).overlap_days(inside) > 0
        ]
        # Count the union of the periods, so overlapping periods never count a day twice;
        # each day is a share of its policy year, kept exact until the row is rounded.
        days, share, cursor = 0, Fraction(0), inside.start
        for start, end in sorted(relevant):
            span = Window(max(start, cursor), end)
            for piece, year_days in pieces:
                piece_days = span.overlap_days(piece)
                days += piece_days
                share += Fraction(piece_days, year_days)
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
                # One piece: annual x days / year days, as a single division.
                premium=round_money(
                    unit.annual_premium * share.numerator / Decimal(share.denominator)
                ),
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
