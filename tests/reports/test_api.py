"""GET /v1/reports/{id}/raw-data, create_premium_report, snapshots (contract sections 2, 11)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.coverages.services import VEHICLE, coverage_update
from apps.masterdata.models import UnitType
from apps.policies.models import PolicyRate
from apps.reports.models import PolicyPremiumReport
from apps.reports.services import premium_report_create
from tests.conftest import assert_problem, staff_member
from tests.factories import (
    ClientFactory,
    PolicyFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db
D = dt.date


@pytest.fixture
def rated(agency):
    carrier = ClientFactory(agency=agency, client_name="Lone Star Freight", dot="1234567")
    policy = PolicyFactory(
        client=carrier,
        policy_number="AL-1",
        effective_date=D(2026, 1, 1),
        expiration_date=D(2027, 1, 1),
    )
    tractor, trailer = UnitType.objects.get(name="Tractor"), UnitType.objects.get(name="Trailer")
    PolicyRate.objects.create(policy=policy, unit_type=tractor, annual_rate=Decimal("3650"))
    PolicyRate.objects.create(policy=policy, unit_type=trailer, annual_rate=Decimal("730"))
    truck = VehicleFactory(client=carrier, unit="101", unit_type=tractor)
    box = VehicleFactory(client=carrier, unit="T-1", unit_type=trailer)
    VehicleCoverageFactory(vehicle=truck, policy=policy, policy_added_date=D(2026, 1, 1))
    VehicleCoverageFactory(vehicle=box, policy=policy, policy_added_date=D(2026, 11, 11))
    return policy, truck, box


def test_raw_data_is_computed_when_there_is_no_snapshot(api, rated):
    policy, truck, box = rated
    report = premium_report_create(user=None, policy=policy, period="2026-11")
    body = api.get(f"/v1/reports/{report.id}/raw-data").json()
    assert body["reportId"] == report.id and body["source"] == "computed"
    fixed = body["fixedData"]
    assert fixed["policyNumber"] == "AL-1" and fixed["insured"] == "Lone Star Freight"
    assert (fixed["periodStart"], fixed["periodEnd"]) == ("2026-11-01", "2026-11-30")
    assert fixed["agency"] == "Demo Agency"
    rows = {row["unit"]: row for row in body["tableData"]}
    assert rows["101"]["daysOnPolicy"] == 30 and rows["101"]["premium"] == "300.00"
    assert rows["T-1"]["daysOnPolicy"] == 20 and rows["T-1"]["premium"] == "40.00"
    assert body["premiumMapping"] == {
        "totalPremium": "340.00",
        "earnedPremium": "340.00",
        "unitCount": 2,
        "byUnitType": {
            "Tractor": {"unitCount": 1, "premium": "300.00"},
            "Trailer": {"unitCount": 1, "premium": "40.00"},
        },
    }


def test_snapshot_is_frozen_while_the_computed_view_moves(api, rated, manager):
    policy, truck, _ = rated
    frozen = premium_report_create(user=None, policy=policy, period="2026-11", snapshot=True)
    live = premium_report_create(user=None, policy=policy, period="2026-11")
    before = api.get(f"/v1/reports/{frozen.id}/raw-data").json()
    assert before["source"] == "snapshot" and before["snapshotAt"].endswith("Z")
    coverage_update(
        user=manager,
        subject=VEHICLE,
        target_id=truck.id,
        policy_id=policy.id,
        coverage_status=1,
        policy_removed_date=D(2026, 11, 16),
    )
    after = api.get(f"/v1/reports/{frozen.id}/raw-data").json()
    assert after == before
    moved = api.get(f"/v1/reports/{live.id}/raw-data").json()
    assert {r["unit"]: r["daysOnPolicy"] for r in moved["tableData"]}["101"] == 15
    assert moved["premiumMapping"]["totalPremium"] == "190.00"


def test_default_period_is_the_current_month(rated):
    from apps.core.dates import today

    report = premium_report_create(user=None, policy=rated[0])
    assert report.period_start == today().replace(day=1)


def test_other_agency_and_missing_reports_are_404(other_api, api, rated):
    report = premium_report_create(user=None, policy=rated[0], period="2026-11")
    assert_problem(other_api.get(f"/v1/reports/{report.id}/raw-data"), 404)
    assert_problem(api.get("/v1/reports/999999/raw-data"), 404)


def test_needs_the_view_permission(make_api, powerless, rated):
    report = premium_report_create(user=None, policy=rated[0], period="2026-11")
    assert_problem(make_api(powerless).get(f"/v1/reports/{report.id}/raw-data"), 403)


def test_query_count_does_not_grow_with_units(api, rated, django_assert_max_num_queries):
    policy = rated[0]
    report = premium_report_create(user=None, policy=policy, period="2026-11")
    api.get(f"/v1/reports/{report.id}/raw-data")
    with django_assert_max_num_queries(10) as few:
        api.get(f"/v1/reports/{report.id}/raw-data")
    for _ in range(20):
        VehicleCoverageFactory(vehicle=VehicleFactory(client=policy.client), policy=policy)
    with django_assert_max_num_queries(10) as many:
        body = api.get(f"/v1/reports/{report.id}/raw-data").json()
    assert body["premiumMapping"]["unitCount"] == 22
    assert len(few.captured_queries) == len(many.captured_queries)


def test_create_premium_report_command(rated):
    out = StringIO()
    call_command(
        "create_premium_report", str(rated[0].id), "--period", "2026-11", "--snapshot", stdout=out
    )
    report = PolicyPremiumReport.objects.get(pk=int(out.getvalue().strip()))
    assert report.snapshot is not None and report.period_end == D(2026, 11, 30)
    with pytest.raises(CommandError):
        call_command(
            "create_premium_report", str(rated[0].id), "--period", "2026-13", stdout=StringIO()
        )
    with pytest.raises(CommandError):
        call_command("create_premium_report", "999999", stdout=StringIO())
    with pytest.raises(CommandError):  # the form the admin takes too: two digits of month
        call_command(
            "create_premium_report", str(rated[0].id), "--period", "2026-1", stdout=StringIO()
        )


def test_admin_freezes_a_snapshot(client, rated, groups, agency):
    report = premium_report_create(user=None, policy=rated[0], period="2026-11")
    staff = staff_member([agency], groups, "staff")
    client.force_login(staff)
    response = client.post(
        "/admin/reports/policypremiumreport/",
        {"action": "freeze_snapshot", "_selected_action": [report.pk]},
    )
    assert response.status_code == 302
    report.refresh_from_db()
    assert report.snapshot["premium_mapping"]["total_premium"] == "340.00"


def test_whole_raw_data_of_a_policy_without_insurer_or_producer_cancelled_mid_month(api, agency):
    # Every member of fixedData, a row and the totals, whether computed now or frozen: the
    # nulls (no insurer, no producer), the cancellation ending the term, money as text.
    carrier = ClientFactory(agency=agency, client_name="Quiet Roads LLC", dot="7000001")
    policy = PolicyFactory(
        client=carrier,
        policy_number=None,
        insurer=None,
        effective_date=D(2026, 1, 1),
        expiration_date=D(2027, 1, 1),
        cancellation_date=D(2026, 11, 21),
    )
    tractor = UnitType.objects.get(name="Tractor")
    PolicyRate.objects.create(policy=policy, unit_type=tractor, annual_rate=Decimal("3650"))
    truck = VehicleFactory(
        client=carrier, unit="7", unit_type=tractor, serial_number="1XKYDP9X5MJ000777"
    )
    VehicleCoverageFactory(vehicle=truck, policy=policy, policy_added_date=D(2026, 11, 6))
    live = premium_report_create(user=None, policy=policy, period="2026-11")
    frozen = premium_report_create(user=None, policy=policy, period="2026-11", snapshot=True)
    data = {
        "fixedData": {
            "policyId": policy.id,
            "policyNumber": None,
            "insured": "Quiet Roads LLC",
            "dot": "7000001",
            "insurer": None,
            "naic": None,
            "coverageType": "AL",
            "coverageTypeName": policy.coverage_type.name,
            "effectiveDate": "2026-01-01",
            "expirationDate": "2027-01-01",
            "cancellationDate": "2026-11-21",
            "producer": None,
            "agency": "Demo Agency",
            "periodStart": "2026-11-01",
            "periodEnd": "2026-11-30",
            "policyYearDays": 365,
        },
        "tableData": [
            {
                "vehicleId": truck.id,
                "unit": "7",
                "modelYear": 2021,
                "make": "Kenworth",
                "vin": "1XKYDP9X5MJ000777",
                "unitType": "Tractor",
                "statedValue": "100000.00",
                "annualPremium": "3650.00",
                "policyAddedDate": "2026-11-06",
                "policyRemovedDate": None,
                "daysOnPolicy": 15,
                "premium": "150.00",
            }
        ],
        "premiumMapping": {
            "totalPremium": "150.00",
            "earnedPremium": "150.00",
            "unitCount": 1,
            "byUnitType": {"Tractor": {"unitCount": 1, "premium": "150.00"}},
        },
    }
    computed = api.get(f"/v1/reports/{live.id}/raw-data").json()
    assert computed == {"reportId": live.id, "source": "computed", "snapshotAt": None, **data}
    stored = api.get(f"/v1/reports/{frozen.id}/raw-data").json()
    assert stored.pop("snapshotAt").endswith("Z")
    assert stored == {"reportId": frozen.id, "source": "snapshot", **data}


def test_a_policy_of_the_year_9999_has_its_report(api, agency):
    # 9999-12-31 is many a system's "never": a term that starts in the year 9999 has no
    # anniversary a date can hold, and its report answered 500.
    carrier = ClientFactory(agency=agency, dot="7000002")
    policy = PolicyFactory(
        client=carrier, effective_date=D(9999, 3, 1), expiration_date=D(9999, 12, 31)
    )
    tractor = UnitType.objects.get(name="Tractor")
    PolicyRate.objects.create(policy=policy, unit_type=tractor, annual_rate=Decimal("3660"))
    truck = VehicleFactory(client=carrier, unit_type=tractor)
    VehicleCoverageFactory(vehicle=truck, policy=policy, policy_added_date=D(9999, 3, 1))
    for snapshot in (False, True):
        report = premium_report_create(
            user=None, policy=policy, period="9999-11", snapshot=snapshot
        )
        response = api.get(f"/v1/reports/{report.id}/raw-data")
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["fixedData"]["policyYearDays"] == 366  # to March 10000, a leap year
        assert body["premiumMapping"]["totalPremium"] == "300.00"  # 30 days of 3,660 / 366
    # December 9999 has no first day after it to end its window: refused, and said so.
    with pytest.raises(CommandError, match="from 0001-01 to 9999-11"):
        call_command(
            "create_premium_report", str(policy.id), "--period", "9999-12", stdout=StringIO()
        )


def test_by_unit_type_is_keyed_by_the_unit_types_names_as_written(api, agency):
    # byUnitType is {unitType: {...}} (contract section 11): its keys are master data, which
    # the admin edits, not field names; the renderer camel-cased "Day_cab tractor" into
    # "DayCab tractor", a key no row's unitType matched. Computed now or frozen alike.
    carrier = ClientFactory(agency=agency, dot="7000003")
    policy = PolicyFactory(
        client=carrier, effective_date=D(2026, 1, 1), expiration_date=D(2027, 1, 1)
    )
    for name in ("Day_cab tractor", "sleeper_cab_2", "Box Truck"):
        kind, _ = UnitType.objects.get_or_create(name=name)
        PolicyRate.objects.create(policy=policy, unit_type=kind, annual_rate=Decimal("3650"))
        truck = VehicleFactory(client=carrier, unit_type=kind)
        VehicleCoverageFactory(vehicle=truck, policy=policy, policy_added_date=D(2026, 1, 1))
    month = {"unitCount": 1, "premium": "300.00"}
    for snapshot in (False, True):
        report = premium_report_create(
            user=None, policy=policy, period="2026-11", snapshot=snapshot
        )
        body = api.get(f"/v1/reports/{report.id}/raw-data").json()
        assert body["premiumMapping"]["byUnitType"] == {
            "Box Truck": month,
            "Day_cab tractor": month,
            "sleeper_cab_2": month,
        }
        assert {row["unitType"] for row in body["tableData"]} == set(
            body["premiumMapping"]["byUnitType"]
        )
    # A snapshot stores the field names in snake_case and the data as it is (so snapshots
    # frozen before this rule render the same way): the renderer is the one that converts.
    report.refresh_from_db()
    assert set(report.snapshot["premium_mapping"]["by_unit_type"]) == {
        "Box Truck",
        "Day_cab tractor",
        "sleeper_cab_2",
    }
