"""What verification reads of clients, policies, units and periods, as value rows.

A 200-DOT answer reads 200 clients and about 300 policies; a 1,000-unit batch 1,000 units,
1,000 periods and their clients. As model objects (`Model.from_db`, a state object and a
descriptor call per column) they were a quarter to a third of those requests' Python (issue
18). These rows are tuples with the attribute names the models use, filled from
`values_list()` of the same querysets that state the rules (`live()`, `not_ended_on()`,
`covered_on()`, agency scoping, apps.coverages.selectors); a related row (a client's agency,
a policy's coverage type and insurer, a unit's make, plate state and client) is built once per
distinct id (with its columns) and shared, read-only, by the rows that point to it. A policy's
status rule is the model's own (`PolicyTerm`). Rows are built by `tuple.__new__`, which checks
no length: tests/coverages/test_rows.py checks every builder's.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections import namedtuple
from decimal import Decimal
from typing import NamedTuple

from apps.coverages.models import Coverage
from apps.policies.models import PolicyTerm


class LimitRow(NamedTuple):
    """A policy's limit as verification and compliance read it (its name and amount)."""

    name: str
    amount: Decimal


class AgencyRow(NamedTuple):
    id: int
    name: str


class CoverageTypeRow(NamedTuple):
    id: int
    code: str
    name: str
    schedules_units: bool


class InsurerRow(NamedTuple):
    id: int
    name: str
    naic: str | None
    am_best_rating: str


class MakeRow(NamedTuple):
    id: int
    name: str


class StateRow(NamedTuple):
    id: int
    code: str


class ClientRow(NamedTuple):
    """A client as verification shows it (`ClientRefSerializer`) and compliance reads it."""

    id: int
    client_name: str
    dot: str | None
    cargo_class: str
    agency_id: int
    agency: AgencyRow


_PolicyFields = namedtuple(
    "_PolicyFields",
    (
        "id client_id policy_number coverage_type_id coverage_type insurer_id insurer "
        "effective_date expiration_date cancellation_date additional_insured subrogation_waived "
        "deleted limits"
    ),
)


class PolicyRow(PolicyTerm, _PolicyFields):
    """A policy as verification shows it (`CoverageRefSerializer`) and compliance judges it;
    `limits` is filled after the read (`LimitRow`s in order, `limit_rows()` as on the model)."""

    __slots__ = ()

    def limit_rows(self) -> list[LimitRow]:
        return self.limits


class VehicleRow(NamedTuple):
    """A unit as verification shows it (`VehicleRefSerializer`), with its client's row."""

    id: int
    client_id: int
    unit: str
    model_year: int
    serial_number: str
    license_plate: str
    license_plate_key: str
    make: MakeRow
    license_plate_state_id: int | None
    license_plate_state: StateRow | None
    client: ClientRow


class PeriodRow(NamedTuple):
    """A period covering a unit on D (`VehicleCoverageRefSerializer`), with its policy's row."""

    id: int
    vehicle_id: int
    policy_id: int
    coverage_status: int
    policy_added_date: dt.date
    policy: PolicyRow


class SchedulingRow(NamedTuple):
    """A unit's period on one of its client's policies, not ended on D: whether a renewal
    takes over for the unit (it must be scheduled on it by then)."""

    vehicle_id: int
    policy_id: int
    policy_added_date: dt.date
    policy_removed_date: dt.date | None

    covers_on = Coverage.covers_on  # the period includes D: the model's rule


# The columns each reader asks `values_list()` for, in the order its rows take them.
CLIENT_COLUMNS = ("id", "client_name", "dot", "cargo_class", "agency_id", "agency__name")
POLICY_COLUMNS = (
    "id",
    "client_id",
    "policy_number",
    "coverage_type_id",
    "coverage_type__code",
    "coverage_type__name",
    "coverage_type__schedules_units",
    "insurer_id",
    "insurer__name",
    "insurer__naic",
    "insurer__am_best_rating",
    "effective_date",
    "expiration_date",
    "cancellation_date",
    "additional_insured",
    "subrogation_waived",
    "deleted",
)
VEHICLE_COLUMNS = (
    "id",
    "client_id",
    "unit",
    "model_year",
    "serial_number",
    "license_plate",
    "license_plate_key",
    "make_id",
    "make__name",
    "license_plate_state_id",
    "license_plate_state__code",
    *(f"client__{column}" for column in CLIENT_COLUMNS[1:]),
)
PERIOD_COLUMNS = ("id", "vehicle_id", "policy_id", "coverage_status", "policy_added_date")
SCHEDULING_COLUMNS = SchedulingRow._fields


def tuple_constructor(row_class):
    """`row_class`'s constructor from one tuple of its fields, in C: a NamedTuple's own
    `__new__` is a Python function, a frame per row (a 200-DOT answer builds about a thousand
    rows; issue 18)."""
    return functools.partial(tuple.__new__, row_class)


new_client, new_policy, new_limit = (
    tuple_constructor(ClientRow),
    tuple_constructor(PolicyRow),
    tuple_constructor(LimitRow),
)


class _Shared(dict):
    """One row per distinct set of columns, built on first sight: `shared[columns]` is a dict
    lookup (a method per row cost more than the row's other work)."""

    __slots__ = ("make",)

    def __init__(self, make):
        super().__init__()
        self.make = make

    def __missing__(self, columns: tuple):
        row = self[columns] = self.make(columns)
        return row


def client_rows(values) -> list[ClientRow]:
    agencies = _Shared(tuple_constructor(AgencyRow))
    return [
        new_client((pk, name, dot, cargo, agency_id, agencies[agency_id, agency_name]))
        for pk, name, dot, cargo, agency_id, agency_name in values
    ]


def policy_rows(values) -> list[PolicyRow]:
    """Policy rows (`limits` empty, to be filled) from `values_list(*POLICY_COLUMNS)`."""
    types, insurers = (
        _Shared(tuple_constructor(CoverageTypeRow)),
        _Shared(tuple_constructor(InsurerRow)),
    )
    return [
        new_policy(
            (
                pk,
                client_id,
                number,
                type_id,
                types[type_id, type_code, type_name, schedules_units],
                insurer_id,
                None if insurer_id is None else insurers[insurer_id, insurer_name, naic, rating],
                effective,
                expiration,
                cancellation,
                additional_insured,
                subrogation_waived,
                deleted,
                [],
            )
        )
        for (
            pk,
            client_id,
            number,
            type_id,
            type_code,
            type_name,
            schedules_units,
            insurer_id,
            insurer_name,
            naic,
            rating,
            effective,
            expiration,
            cancellation,
            additional_insured,
            subrogation_waived,
            deleted,
        ) in values
    ]


def vehicle_rows(values) -> list[VehicleRow]:
    """Unit rows from `values_list(*VEHICLE_COLUMNS)`: a batch's units are mostly one
    client's, whose row (and agency's) is built once."""
    makes, states = _Shared(tuple_constructor(MakeRow)), _Shared(tuple_constructor(StateRow))
    agencies, clients = _Shared(tuple_constructor(AgencyRow)), {}
    new_vehicle = tuple_constructor(VehicleRow)
    rows = []
    # A row's columns in VEHICLE_COLUMNS' order: the unit's own seven, its make (id, name),
    # its plate state (id, code), then its client's name, DOT, cargo class and agency (id, name).
    for row in values:
        client_id, state_id = row[1], row[9]
        client = clients.get(client_id)
        if client is None:
            client = clients[client_id] = new_client((client_id, *row[11:15], agencies[row[14:16]]))
        state = None if state_id is None else states[row[9:11]]
        rows.append(new_vehicle((*row[:7], makes[row[7:9]], state_id, state, client)))
    return rows
