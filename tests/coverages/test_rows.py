"""Verification's value rows are built by `tuple.__new__` (apps.coverages.rows), which checks
no length: every builder must give each row all of its fields, in the columns' order."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from apps.coverages.rows import (
    CLIENT_COLUMNS,
    POLICY_COLUMNS,
    VEHICLE_COLUMNS,
    AgencyRow,
    ClientRow,
    CoverageTypeRow,
    InsurerRow,
    LimitRow,
    MakeRow,
    PolicyRow,
    StateRow,
    VehicleRow,
    client_rows,
    new_limit,
    policy_rows,
    vehicle_rows,
)
from apps.coverages.selectors import ClientVerification, _client_verification

ON = dt.date(2026, 6, 1)


def _complete(row) -> None:
    assert len(row) == len(type(row)._fields), (type(row).__name__, row)


def test_a_client_row_has_every_field():
    (row,) = client_rows([(7, "Lone Star", "1234567", "general", 3, "Agency A")])
    _complete(row)
    assert len(CLIENT_COLUMNS) == 6
    assert row == ClientRow(7, "Lone Star", "1234567", "general", 3, AgencyRow(3, "Agency A"))
    _complete(row.agency)


def test_policy_rows_have_every_field_and_share_their_related_rows():
    columns = (
        11, 7, "AL-1", 2, "AL", "Auto Liability", True, 5, "Insurer", "12345", "A",
        dt.date(2026, 1, 1), dt.date(2027, 1, 1), None, True, False, False,
    )  # fmt: skip
    assert len(columns) == len(POLICY_COLUMNS)
    first, second = policy_rows([columns, (12, *columns[1:6], *columns[6:])])
    for row in (first, second):
        _complete(row)
        _complete(row.coverage_type)
        _complete(row.insurer)
    assert first.coverage_type is second.coverage_type and first.insurer is second.insurer
    assert first.coverage_type == CoverageTypeRow(2, "AL", "Auto Liability", True)
    assert first.insurer == InsurerRow(5, "Insurer", "12345", "A")
    assert (first.id, first.client_id, first.policy_number) == (11, 7, "AL-1")
    assert (first.effective_date, first.expiration_date, first.cancellation_date) == (
        dt.date(2026, 1, 1),
        dt.date(2027, 1, 1),
        None,
    )
    assert (first.additional_insured, first.subrogation_waived, first.deleted) == (
        True,
        False,
        False,
    )
    assert first.limits == [] and first.limits is not second.limits
    assert first.status_on(ON) == "ACTIVE"
    (uninsured,) = policy_rows([(13, *columns[1:7], None, None, None, None, *columns[11:])])
    _complete(uninsured)
    assert uninsured.insurer is None
    assert isinstance(first, PolicyRow)


def test_a_vehicle_row_has_every_field():
    columns = (
        21, 7, "U1", 2024, "1XKYDP9X5MJ000001", "TX 1", "TX1", 4, "Kenworth", 9, "TX",
        "Lone Star", "1234567", "general", 3, "Agency A",
    )  # fmt: skip
    assert len(columns) == len(VEHICLE_COLUMNS)
    (row,) = vehicle_rows([columns])
    _complete(row)
    _complete(row.client)
    assert row.make == MakeRow(4, "Kenworth") and row.license_plate_state == StateRow(9, "TX")
    assert row.client == ClientRow(
        7, "Lone Star", "1234567", "general", 3, AgencyRow(3, "Agency A")
    )
    assert isinstance(row, VehicleRow)
    (plateless,) = vehicle_rows([(*columns[:9], None, None, *columns[11:])])
    _complete(plateless)
    assert plateless.license_plate_state is None


def test_a_limit_and_a_result_have_every_field():
    limit = new_limit(("Combined Single Limit", Decimal("1000000.00")))
    _complete(limit)
    assert limit == LimitRow("Combined Single Limit", Decimal("1000000.00"))
    (client,) = client_rows([(7, "Lone Star", "1234567", "general", 3, "Agency A")])
    result = _client_verification("1234567", client, [], ON)
    _complete(result)
    assert isinstance(result, ClientVerification)
    assert (result.verified, result.status, result.checked, result.compliance) == (
        False,
        "INACTIVE",
        False,
        None,
    )
