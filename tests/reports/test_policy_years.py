"""A report of a term longer than a year divides by the days of the policy year its period is in
(docs/api.md: "annual x days / 365 (366 when the policy year holds February 29th)"): the year
from the effective date's last anniversary to its next, not the term's first year. A period
across an anniversary prices the days on each side by their own policy year."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from apps.masterdata.models import UnitType
from apps.policies.models import PolicyRate
from apps.reports.services import premium_report_create
from tests.factories import ClientFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db
D = dt.date
# 365 x 366: a whole number of cents a day in a year of either length.
ANNUAL = Decimal(365 * 366)


def raw_data(api, agency, *, effective, expiration, period, snapshot=False) -> dict:
    """The raw data of `period` of a policy with one tractor on it for its whole term."""
    carrier = ClientFactory(agency=agency)
    policy = PolicyFactory(client=carrier, effective_date=effective, expiration_date=expiration)
    tractor = UnitType.objects.get(name="Tractor")
    PolicyRate.objects.create(policy=policy, unit_type=tractor, annual_rate=ANNUAL)
    truck = VehicleFactory(client=carrier, unit_type=tractor)
    VehicleCoverageFactory(vehicle=truck, policy=policy, policy_added_date=effective)
    report = premium_report_create(user=None, policy=policy, period=period, snapshot=snapshot)
    response = api.get(f"/v1/reports/{report.id}/raw-data")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("snapshot", [False, True])
def test_the_second_year_of_a_term_without_february_29th_has_365_days(api, agency, snapshot):
    # 2027-03-01..2029-03-01: the first year holds 2028-02-29, the second
    # (2028-03-01..2029-03-01), which June 2028 is in, does not.
    body = raw_data(
        api, agency, effective=D(2027, 3, 1), expiration=D(2029, 3, 1), period="2028-06"
    )
    assert body["fixedData"]["policyYearDays"] == 365
    [row] = body["tableData"]
    assert (row["daysOnPolicy"], row["premium"]) == (30, f"{366 * 30}.00")
    assert body["premiumMapping"]["totalPremium"] == f"{366 * 30}.00"


def test_the_second_year_of_a_term_holding_february_29th_has_366_days(api, agency):
    # 2026-06-01..2028-06-01: December 2027 is in 2027-06-01..2028-06-01, which holds
    # 2028-02-29; the first year (to 2027-06-01) does not.
    body = raw_data(
        api, agency, effective=D(2026, 6, 1), expiration=D(2028, 6, 1), period="2027-12"
    )
    assert body["fixedData"]["policyYearDays"] == 366
    [row] = body["tableData"]
    assert (row["daysOnPolicy"], row["premium"]) == (31, f"{365 * 31}.00")


def test_a_period_across_an_anniversary_prices_each_side_by_its_own_year(api, agency):
    # 2027-06-15..2029-06-15, June 2028: the 1st to the 14th are in the year to 2028-06-15
    # (366 days, it holds 2028-02-29), the 15th to the 30th in the next (365 days).
    body = raw_data(
        api, agency, effective=D(2027, 6, 15), expiration=D(2029, 6, 15), period="2028-06"
    )
    assert body["fixedData"]["policyYearDays"] == 366  # the year of the period's first day
    [row] = body["tableData"]
    assert row["daysOnPolicy"] == 30
    assert row["premium"] == f"{365 * 14 + 366 * 16}.00"  # ANNUAL x (14 / 366 + 16 / 365)
    assert body["premiumMapping"]["totalPremium"] == row["premium"]


def test_a_february_29th_policy_has_its_anniversaries_on_march_1st_but_in_leap_years(api, agency):
    # Effective 2024-02-29: anniversaries 2025-03-01, 2026-03-01, 2027-03-01, 2028-02-29.
    # The year 2027-03-01..2028-02-29 has 365 days; February 2028 straddles its end.
    body = raw_data(
        api, agency, effective=D(2024, 2, 29), expiration=D(2029, 3, 1), period="2027-12"
    )
    assert body["fixedData"]["policyYearDays"] == 365
    assert body["tableData"][0]["premium"] == f"{366 * 31}.00"
    body = raw_data(
        api, agency, effective=D(2024, 2, 29), expiration=D(2029, 3, 1), period="2028-02"
    )
    assert body["fixedData"]["policyYearDays"] == 365
    [row] = body["tableData"]
    assert row["daysOnPolicy"] == 29
    assert row["premium"] == f"{366 * 28 + 365 * 1}.00"  # the 29th is in a 366-day year
