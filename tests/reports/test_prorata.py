"""Pro-rata arithmetic on hand-worked cases, and totals that always add up (hypothesis)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.reports.prorata import (
    PremiumMapping,
    ScheduledUnit,
    UnitTypeTotal,
    Window,
    anniversary,
    month_window,
    policy_year_days,
    policy_year_pieces,
    premium_mapping,
    premium_rows,
    report_year_days,
)

D = dt.date
NOVEMBER = month_window("2026-11")
YEAR_TERM = Window(D(2026, 1, 1), D(2027, 1, 1))


def unit(*periods, annual="3650.00", unit_type="Tractor", vehicle_id=1) -> ScheduledUnit:
    return ScheduledUnit(
        vehicle_id=vehicle_id,
        unit=f"U{vehicle_id}",
        model_year=2020,
        make="Mack",
        vin=f"1M1AN07Y{vehicle_id:09d}",
        unit_type=unit_type,
        stated_value=None,
        annual_premium=Decimal(annual),
        periods=list(periods),
    )


def rows_for(*units, period=NOVEMBER, term=YEAR_TERM):
    return premium_rows(units, period=period, term=term)


def first_year_days(effective: dt.date) -> int:
    """The days of a policy's first year: the year holding its effective date."""
    return policy_year_days(effective, on=effective)


def test_month_window_and_policy_year():
    assert Window(D(2026, 11, 1), D(2026, 12, 1)) == NOVEMBER
    assert month_window("2026-12") == Window(D(2026, 12, 1), D(2027, 1, 1))
    assert first_year_days(D(2026, 1, 1)) == 365
    assert first_year_days(D(2024, 1, 1)) == 366
    assert first_year_days(D(2023, 3, 1)) == 366  # the year to March 2024 holds Feb 29th
    assert first_year_days(D(2024, 2, 29)) == 366  # to March 1st, 2025
    assert first_year_days(D(2024, 3, 1)) == 365
    assert first_year_days(D(2023, 2, 28)) == 365
    # A policy of the year 9999 has no anniversary to build: the calendar still counts
    # (10000 would be a leap year, divisible by 400).
    assert first_year_days(D(9999, 1, 1)) == 365
    assert first_year_days(D(9999, 3, 1)) == 366
    assert first_year_days(D(9999, 12, 31)) == 366


def test_policy_year_days_is_the_distance_to_the_anniversary_every_day_of_four_centuries():
    day = D(1900, 1, 1)
    while day < D(2300, 1, 1):
        try:
            anniversary = day.replace(year=day.year + 1)
        except ValueError:  # February 29th
            anniversary = D(day.year + 1, 3, 1)
        assert first_year_days(day) == (anniversary - day).days, day
        day += dt.timedelta(days=1)
    assert first_year_days(D(2024, 2, 29)) == 366


def _anniversaries(effective: dt.date):
    # Built by hand, for the checks below: the same day each year, March 1st for a February
    # 29th in a year without one.
    year = effective.year
    while True:
        try:
            yield effective.replace(year=year)
        except ValueError:
            yield D(year, 3, 1)
        year += 1


@settings(max_examples=500, deadline=None)
@given(
    effective=st.dates(min_value=D(1900, 1, 1), max_value=D(2300, 1, 1)),
    offset=st.integers(min_value=0, max_value=12 * 366),
)
def test_policy_year_days_of_a_day_is_the_distance_between_the_anniversaries_around_it(
    effective, offset
):
    day = effective + dt.timedelta(days=offset)
    starts = _anniversaries(effective)
    start, end = next(starts), next(starts)
    while end <= day:
        start, end = end, next(starts)
    assert policy_year_days(effective, on=day) == (end - start).days, (effective, day)
    assert anniversary(effective, start.year) == start


def test_policy_years_of_a_february_29th_policy():
    effective = D(2024, 2, 29)
    assert [anniversary(effective, y) for y in (2025, 2027, 2028)] == [
        D(2025, 3, 1),
        D(2027, 3, 1),
        D(2028, 2, 29),
    ]
    assert policy_year_days(effective, on=D(2025, 2, 28)) == 366  # 2024-02-29..2025-03-01
    assert policy_year_days(effective, on=D(2027, 3, 1)) == 365  # 2027-03-01..2028-02-29
    assert policy_year_days(effective, on=D(2028, 2, 28)) == 365
    assert policy_year_days(effective, on=D(2028, 2, 29)) == 366  # to 2029-03-01


def test_a_window_is_cut_at_the_anniversaries_it_holds():
    june = month_window("2028-06")
    assert policy_year_pieces(D(2027, 6, 15), june) == [
        (Window(D(2028, 6, 1), D(2028, 6, 15)), 366),
        (Window(D(2028, 6, 15), D(2028, 7, 1)), 365),
    ]
    assert policy_year_pieces(D(2027, 6, 1), june) == [(june, 365)]
    assert policy_year_pieces(D(2027, 6, 1), Window(june.start, june.start)) == []
    # A year starting in 9999 has no next anniversary to cut at.
    november = month_window("9999-11")
    assert policy_year_pieces(D(9998, 3, 1), november) == [(november, 366)]


def test_a_report_shows_the_year_of_its_periods_first_day_on_the_term():
    term = Window(D(2027, 6, 15), D(2029, 6, 15))
    assert report_year_days(period=month_window("2028-06"), term=term) == 366
    assert report_year_days(period=month_window("2028-07"), term=term) == 365
    assert report_year_days(period=month_window("2027-01"), term=term) == 366  # before it
    assert report_year_days(period=month_window("2031-01"), term=term) == 365  # after it
    same_day = Window(D(2027, 6, 15), D(2027, 6, 15))  # cancelled on its effective date
    assert report_year_days(period=month_window("2027-06"), term=same_day) == 366


def test_days_across_an_anniversary_are_priced_over_their_own_year():
    term = Window(D(2027, 6, 15), D(2029, 6, 15))
    annual = str(365 * 366)
    [row] = rows_for(
        unit((D(2027, 6, 15), None), annual=annual), period=month_window("2028-06"), term=term
    )
    assert (row.days_on_policy, row.premium) == (30, Decimal(365 * 14 + 366 * 16))
    # Scheduled only after the anniversary, or only before it: one year's days each.
    [after] = rows_for(
        unit((D(2028, 6, 20), None), annual=annual), period=month_window("2028-06"), term=term
    )
    assert (after.days_on_policy, after.premium) == (11, Decimal(366 * 11))
    [before] = rows_for(
        unit((D(2027, 6, 15), D(2028, 6, 10)), annual=annual),
        period=month_window("2028-06"),
        term=term,
    )
    assert (before.days_on_policy, before.premium) == (9, Decimal(365 * 9))


def test_whole_month():
    [row] = rows_for(unit((D(2026, 1, 1), None)))
    assert (row.days_on_policy, row.premium) == (30, Decimal("300.00"))


def test_added_mid_period():
    [row] = rows_for(unit((D(2026, 11, 11), None)))
    assert (row.days_on_policy, row.premium) == (20, Decimal("200.00"))


def test_removed_mid_period():
    [row] = rows_for(unit((D(2026, 1, 1), D(2026, 11, 11))))
    assert (row.days_on_policy, row.premium) == (10, Decimal("100.00"))
    assert row.policy_removed_date == D(2026, 11, 11)


def test_added_before_the_term_counts_from_the_term():
    term = Window(D(2026, 11, 5), D(2027, 11, 5))
    [row] = rows_for(unit((D(2026, 10, 1), None)), term=term)
    assert (row.days_on_policy, row.premium) == (26, Decimal("260.00"))


def test_leap_year():
    february = month_window("2024-02")
    term = Window(D(2024, 1, 1), D(2025, 1, 1))
    [row] = rows_for(unit((D(2024, 1, 1), None), annual="3660.00"), period=february, term=term)
    assert (row.days_on_policy, row.premium) == (29, Decimal("290.00"))


def test_period_outside_the_term_has_no_rows():
    term = Window(D(2025, 1, 1), D(2026, 1, 1))
    rows = rows_for(unit((D(2025, 1, 1), None)), term=term)
    assert rows == []
    assert premium_mapping(rows) == PremiumMapping(
        total_premium=Decimal("0.00"),
        earned_premium=Decimal("0.00"),
        unit_count=0,
        by_unit_type={},
    )


def test_cancellation_ends_the_term():
    term = Window(D(2026, 1, 1), D(2026, 11, 16))
    [row] = rows_for(unit((D(2026, 1, 1), None)), term=term)
    assert row.days_on_policy == 15


def test_a_unit_scheduled_twice_in_the_month_is_one_row():
    [row] = rows_for(unit((D(2026, 11, 1), D(2026, 11, 6)), (D(2026, 11, 21), None)))
    assert (row.days_on_policy, row.premium) == (15, Decimal("150.00"))
    assert row.policy_added_date == D(2026, 11, 1) and row.policy_removed_date is None


def test_rounding_is_half_up_per_row_and_totals_are_sums_of_rows():
    half_cent = unit((D(2026, 11, 30), None), annual="1.825", vehicle_id=1)  # 0.005 exactly
    third = unit((D(2026, 11, 30), None), annual="1.00", vehicle_id=2, unit_type="Trailer")
    rows = rows_for(half_cent, third)
    assert [r.premium for r in rows] == [Decimal("0.01"), Decimal("0.00")]
    assert premium_mapping(rows).total_premium == Decimal("0.01")
    assert premium_mapping(rows).by_unit_type == {
        "Tractor": UnitTypeTotal(unit_count=1, premium=Decimal("0.01")),
        "Trailer": UnitTypeTotal(unit_count=1, premium=Decimal("0.00")),
    }


def test_a_unit_removed_before_the_period_has_no_row():
    assert rows_for(unit((D(2026, 1, 1), D(2026, 10, 31)))) == []


days = st.integers(min_value=0, max_value=500)
unit_periods = st.lists(
    st.tuples(days, st.one_of(st.none(), st.integers(min_value=1, max_value=400))),
    min_size=1,
    max_size=3,
)


@settings(max_examples=200, deadline=None)
@given(
    units=st.lists(
        st.tuples(
            unit_periods,
            st.decimals(min_value=0, max_value=100_000, places=2, allow_nan=False),
            st.sampled_from(["Tractor", "Trailer", "Box Truck"]),
        ),
        min_size=0,
        max_size=25,
    ),
    month=st.integers(min_value=1, max_value=12),
)
def test_totals_always_equal_the_sum_of_the_rows(units, month):
    base = D(2026, 1, 1)
    scheduled = [
        unit(
            *[
                (
                    base + dt.timedelta(days=start),
                    None if length is None else base + dt.timedelta(days=start + length),
                )
                for start, length in periods
            ],
            annual=str(annual),
            unit_type=kind,
            vehicle_id=n,
        )
        for n, (periods, annual, kind) in enumerate(units)
    ]
    period = month_window(f"2026-{month:02d}")
    rows = rows_for(*scheduled, period=period)
    mapping = premium_mapping(rows)
    assert Decimal(mapping.total_premium) == sum((Decimal(r.premium) for r in rows), Decimal("0"))
    assert sum(Decimal(b.premium) for b in mapping.by_unit_type.values()) == Decimal(
        mapping.total_premium
    )
    assert mapping.unit_count == len(rows)
    for row in rows:
        assert 1 <= row.days_on_policy <= (period.end - period.start).days
        assert Decimal(row.premium) == Decimal(row.premium).quantize(Decimal("0.01"))
