"""Real-time verification (contract section 8): a constant number of queries per call.

Nothing is fetched per DOT, per vehicle or per policy. Many DOTs: the clients with the policies
that matter on the as-of date in one statement, their limits in a second. One DOT or a client
id: the client, its policies and their limits in one. A VIN or a plate: its units with their
covering periods, policies and limits in one. A batch: the units, their covering periods, the
policies and the limits, in four. For a handful of rows a statement costs more than the columns
repeated on each row; for many, a policy's columns repeated on each of its limits cost more
than the statement that reads the limits apart (issue 18).
"""

from __future__ import annotations

import datetime as dt
import operator
from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from django.db.models import Exists, FilteredRelation, OuterRef, Q

from apps.clients.models import Client
from apps.compliance.evaluation import RESULTS, Verdict, verdict
from apps.compliance.selectors import ProfileChoice
from apps.core.identifiers import plate_key
from apps.core.models import agency_ids_for, live_q
from apps.core.prepared import PreparedQuery
from apps.coverages.models import VehicleCoverage, period_covers_q
from apps.coverages.rows import (
    CLIENT_COLUMNS,
    PERIOD_COLUMNS,
    POLICY_COLUMNS,
    SCHEDULING_COLUMNS,
    VEHICLE_COLUMNS,
    ClientRow,
    LimitRow,
    PeriodRow,
    PolicyRow,
    SchedulingRow,
    VehicleRow,
    client_rows,
    new_limit,
    policy_rows,
    tuple_constructor,
    vehicle_rows,
)
from apps.masterdata.models import State
from apps.policies.choices import PolicyStatus
from apps.policies.models import Policy, PolicyLimit, in_force_q, not_ended_q
from apps.vehicles.models import Vehicle, has_plate

ACTIVE, INACTIVE, NOT_FOUND = "ACTIVE", "INACTIVE", "NOT_FOUND"


def _fill_limits(lists: dict[int, list]) -> None:
    """Each policy's limits in order, appended as `LimitRow`s to its list, in one query. The
    order (position, then id: integers, so the same in every database) is put here, not by an
    ORDER BY: PostgreSQL's sort of 200 DOTs' 300 limits cost 0.15-0.2 ms of its CPU, this sort
    a few hundredths (issue 18)."""
    if lists:
        _append_limits(lists, _LIMIT_ROWS.fetch(policies=list(lists)))


def _append_limits(lists: dict[int, list], rows: list[tuple]) -> None:
    rows.sort(key=_LIMIT_ORDER)
    for policy_id, _position, _id, name, amount in rows:
        lists[policy_id].append(new_limit((name, amount)))


def attach_limit_rows(policies: Iterable[Policy]) -> None:
    """Each policy's limits in order, as plain rows in `prefetched_limits` (read through
    `Policy.limit_rows()`), in one query: no model object, manager or queryset per policy or
    per limit (for 200 DOTs' 300 policies, a fifth of the request when prefetched as models)."""
    lists = {}
    for policy in policies:
        policy.prefetched_limits = lists[policy.pk] = []
    _fill_limits(lists)


# Verification's queries, each stated once as a queryset and compiled once per process for
# each shape of its values (apps.core.prepared): about half of a one-DOT call's Python was
# building and compiling these same statements again (issue 18).
_LIMIT_ROWS = PreparedQuery(
    lambda policies: (
        PolicyLimit.objects.filter(policy_id__in_list=policies)
        .order_by()
        .values_list("policy_id", "position", "id", "name", "amount")
    ),
    arrays=("policies",),
)
_LIMIT_ORDER = operator.itemgetter(1, 2)
_CLIENT_POLICIES = PreparedQuery(
    lambda clients, on: (
        Policy.objects.live()
        .not_ended_on(on)
        .filter(client_id__in_list=clients)
        .order_by("coverage_type__code", "effective_date", "id")
        .values_list(*POLICY_COLUMNS)
    ),
    arrays=("clients",),
)


# The live policies not ended on D of `policies_by_client`, stated with the same rules
# (`live_q`, `not_ended_q`) as a join from the client, so clients come with their policies in
# one statement, in the order the separate statements give (a client without such policies:
# one row of NULLs). One client (one DOT, a client id) also joins the limits, one row per
# limit (a policy without limits: NULLs); many clients read the limits in a statement of their
# own, since a policy's columns repeated on each of its limits (a general liability policy has
# six) would cost more than that statement.
_POLICIES_JOINED = "policy_not_ended"
_JOINED_POLICY_COLUMNS = tuple(f"{_POLICIES_JOINED}__{column}" for column in POLICY_COLUMNS)
_JOINED_LIMIT_COLUMNS = (f"{_POLICIES_JOINED}__limits__name", f"{_POLICIES_JOINED}__limits__amount")


def _with_policies(clients, on: dt.date, *, limits: bool = True):
    joined = _POLICIES_JOINED
    order = ["id", f"{joined}__coverage_type__code", f"{joined}__effective_date", f"{joined}__id"]
    columns = [*CLIENT_COLUMNS, *_JOINED_POLICY_COLUMNS]
    if limits:
        order += [f"{joined}__limits__position", f"{joined}__limits__id"]
        columns += _JOINED_LIMIT_COLUMNS
    return (
        clients.annotate(
            **{
                joined: FilteredRelation(
                    "policies", condition=live_q("policies") & not_ended_q(on, "policies__")
                )
            }
        )
        .order_by(*order)
        .values_list(*columns)
    )


def _clients_and_policies(
    rows, *, limits: bool = True
) -> tuple[list[ClientRow], dict[int, list[PolicyRow]]]:
    """Client rows and each one's policy rows, with their limits, from `_with_policies` (the
    limits read by one more statement when the rows do not carry them: sent before the rows
    become records, and read after, so the database reads them meanwhile)."""
    width, policy_width = len(CLIENT_COLUMNS), len(POLICY_COLUMNS)
    if limits:
        clients, policies = _client_and_policy_rows(rows)
        name = width + policy_width
        for row in rows:
            if row[name] is not None:  # a limit's name is never NULL: NULL is no limit
                policies[row[width]].limits.append(new_limit((row[name], row[name + 1])))
        return clients, _by_client(policies.values())
    ids = list(dict.fromkeys(row[width] for row in rows if row[width] is not None))
    if not ids:
        clients, policies = _client_and_policy_rows(rows)
        return clients, {}
    with _LIMIT_ROWS.sent(policies=ids) as limit_rows:
        clients, policies = _client_and_policy_rows(rows)
        _append_limits({pk: policy.limits for pk, policy in policies.items()}, limit_rows())
    return clients, _by_client(policies.values())


def _client_and_policy_rows(rows) -> tuple[list[ClientRow], dict[int, PolicyRow]]:
    """The client rows and the policy rows (by id, limits not yet read) of `_with_policies`."""
    width, policy_width = len(CLIENT_COLUMNS), len(POLICY_COLUMNS)
    clients = client_rows({row[0]: row[:width] for row in rows}.values())
    columns = {
        row[width]: row[width : width + policy_width] for row in rows if row[width] is not None
    }
    return clients, {policy.id: policy for policy in policy_rows(columns.values())}


def _by_client(policies: Iterable[PolicyRow]) -> dict[int, list[PolicyRow]]:
    """The policies per client, in their order."""
    grouped: dict[int, list[PolicyRow]] = defaultdict(list)
    for policy in policies:
        grouped[policy.client_id].append(policy)
    return grouped


def _with_limits(policies: list[PolicyRow]) -> list[PolicyRow]:
    _fill_limits({policy.id: policy.limits for policy in policies})
    return policies


def policies_by_client(client_ids: Iterable[int], on: dt.date) -> dict[int, list[PolicyRow]]:
    """The live policies not ended on D (in force, or starting later), per client, with what
    verification and compliance read (two queries); compliance monitoring uses it too."""
    clients = list(dict.fromkeys(client_ids))
    return _by_client(_with_limits(policy_rows(_CLIENT_POLICIES.fetch(clients=clients, on=on))))


def _compliance(
    profile: ProfileChoice | None,
    client: ClientRow | None,
    policies: list[PolicyRow],
    on: dt.date,
    unit_policies: list[PolicyRow] | None = None,
    unit_schedule: dict[int, list[SchedulingRow]] | None = None,
) -> Verdict | None:
    """The client's (or unit's) verdict under the profile asked for; None without a profile or
    for what was not found."""
    if profile is None or client is None:
        return None
    return verdict(
        profile.for_agency(client.agency_id),
        policies=policies,
        cargo_class=client.cargo_class,
        on=on,
        unit_policies=unit_policies,
        unit_schedule=unit_schedule,
    )


class ClientVerification(NamedTuple):
    """One answer of client verification, shaped by `ClientVerificationSerializer`: the DOT
    asked, the client found (None: not found), its live policies not ended on D and what was
    computed of them (`checked`: a profile was asked for, so `compliance` is shown)."""

    dot: str | None
    client: ClientRow | None
    policies: list[PolicyRow]
    on: dt.date
    verified: bool
    status: str
    checked: bool
    compliance: Verdict | None

    @property
    def found(self) -> bool:
        return self.client is not None


_new_client_verification = tuple_constructor(ClientVerification)


def _client_verification(
    dot: str | None,
    client: ClientRow | None,
    policies: list[PolicyRow],
    on: dt.date,
    profile: ProfileChoice | None = None,
) -> ClientVerification:
    checked = profile is not None
    if client is None:
        return ClientVerification(dot, None, [], on, False, NOT_FOUND, checked, None)
    in_force = False
    for policy in policies:  # a loop, not any(): 200 DOTs' generators cost 0.1 ms (issue 18)
        if policy.status_on(on) == PolicyStatus.ACTIVE:
            in_force = True
            break
    return _new_client_verification(
        (
            client.dot if dot is None else dot,
            client,
            policies,
            on,
            in_force,
            ACTIVE if in_force else INACTIVE,
            checked,
            _compliance(profile, client, policies, on) if checked else None,
        )
    )


def _clients(agencies: list[int] | None):
    return Client.objects.for_agencies(agencies).live()


_CLIENT_BY_ID = PreparedQuery(
    lambda agencies, pk, on: _with_policies(_clients(agencies), on).filter(pk=pk)
)
_CLIENT_BY_DOT = PreparedQuery(
    lambda agencies, dot, on: _with_policies(_clients(agencies), on).filter(dot=dot)
)
_CLIENTS_BY_DOTS = PreparedQuery(
    lambda agencies, dots, on: _with_policies(
        _clients(agencies).filter(dot__in_list=dots), on, limits=False
    ),
    arrays=("dots",),
)


def verify_clients(
    *,
    user,
    on: dt.date,
    dots: list[str] | None = None,
    client_id: int | None = None,
    profile: ProfileChoice | None = None,
) -> list[ClientVerification]:
    """One result per requested DOT (request order, duplicates once), or one for the client id;
    with a profile, each found client's compliance, computed from the policies read anyway."""
    agencies = agency_ids_for(user)
    if client_id is not None:
        rows = _CLIENT_BY_ID.fetch(agencies=agencies, pk=client_id, on=on)
        clients, policies = _clients_and_policies(rows)
    elif len(dots := list(dict.fromkeys(dots))) == 1:
        rows = _CLIENT_BY_DOT.fetch(agencies=agencies, dot=dots[0], on=on)
        clients, policies = _clients_and_policies(rows)
    else:
        rows = _CLIENTS_BY_DOTS.fetch(agencies=agencies, dots=dots, on=on)
        clients, policies = _clients_and_policies(rows, limits=False)
    if client_id is not None:
        return [_client_verification(None, c, policies.get(c.id, []), on, profile) for c in clients]

    # A user of several agencies may see the same DOT twice: the verified client answers.
    # (The policies are looked at only for such a DOT: 200 DOTs are almost always 200 clients.)
    by_dot: dict[str, ClientRow] = {}
    for client in clients:
        current = by_dot.get(client.dot)
        if current is None or (
            any(p.in_force_on(on) for p in policies.get(client.id, []))
            and not any(p.in_force_on(on) for p in policies.get(current.id, []))
        ):
            by_dot[client.dot] = client
    results = []
    for dot in dots:
        client = by_dot.get(dot)
        results.append(
            _client_verification(
                dot, client, policies.get(client.id, []) if client else [], on, profile
            )
        )
    return results


def covered_today_filter(on: dt.date) -> Q:
    """SQL for "this vehicle is covered on D", the one rule (`periods_covering`, verification):
    the unit and its client are live (`live_q`: a deleted unit, or any unit of a deleted client,
    is found by no verification and covered by nothing), and a period covers it on D under a
    policy in force on D (`covered_q`). A condition on a queryset of vehicles; negated (`~`),
    the units not covered, the gone ones among them."""
    covering = VehicleCoverage.objects.filter(vehicle=OuterRef("pk")).covered_on(on)
    return live_q("", "client") & Q(Exists(covering))


def covered_vehicle_ids(vehicle_ids: Iterable[int], on: dt.date) -> set[int]:
    """Which of these vehicles are covered on D, by `covered_today_filter`: one query over the
    page's own units, for a page of vehicles. As a column of the agency's list (`annotate`),
    PostgreSQL built the set of every covered unit of the agency before the page's first row
    (120 ms for 300,000 units; issue 18)."""
    units = Vehicle.objects.filter(pk__in=list(vehicle_ids)).filter(covered_today_filter(on))
    return set(units.order_by().values_list("pk", flat=True))


def _covering(vehicles: list[int], on: dt.date):
    return (
        VehicleCoverage.objects.filter(vehicle_id__in_list=vehicles)
        .covered_on(on)
        .order_by("policy__coverage_type__code", "policy_added_date", "id")
    )


_COVERING_PERIODS = PreparedQuery(_covering, arrays=("vehicles",))
_COVERING_PERIOD_ROWS = PreparedQuery(
    lambda vehicles, on: _covering(vehicles, on).values_list(*PERIOD_COLUMNS),
    arrays=("vehicles",),
)
_POLICY_ROWS = PreparedQuery(
    lambda pks: Policy.objects.filter(pk__in_list=pks).order_by().values_list(*POLICY_COLUMNS),
    arrays=("pks",),
)
_POLICIES = PreparedQuery(
    lambda pks: (
        Policy.objects.select_related("coverage_type", "insurer").filter(pk__in_list=pks).order_by()
    ),
    arrays=("pks",),
)


def covering_periods(vehicle_ids: Iterable[int], on: dt.date) -> dict[int, list[VehicleCoverage]]:
    """Periods that cover each vehicle on D under a policy in force on D (three queries), as
    models with their policies (the certificate reads more of a policy than verification).

    A fleet of 1,000 units is covered by a handful of policies: each policy (with its type,
    insurer and limits) is read and built once and shared by its periods, not once per period
    as a select_related would (1,000 policy, type and insurer objects and 1,000 limit lists).
    """
    periods = _COVERING_PERIODS.fetch(vehicles=list(dict.fromkeys(vehicle_ids)), on=on)
    policy_ids = sorted({period.policy_id for period in periods})
    policies = {p.pk: p for p in _POLICIES.fetch(pks=policy_ids)} if policy_ids else {}
    attach_limit_rows(policies.values())
    grouped: dict[int, list[VehicleCoverage]] = defaultdict(list)
    for period in periods:
        period.policy = policies[period.policy_id]
        grouped[period.vehicle_id].append(period)
    return grouped


def covering_period_rows(vehicle_ids: Iterable[int], on: dt.date) -> dict[int, list[PeriodRow]]:
    """`covering_periods` as verification reads it: the same periods as value rows, each
    policy's row built once and shared by its periods, with its limits (three queries)."""
    periods = _COVERING_PERIOD_ROWS.fetch(vehicles=list(dict.fromkeys(vehicle_ids)), on=on)
    policy_ids = sorted({period[2] for period in periods})
    columns = _POLICY_ROWS.fetch(pks=policy_ids) if policy_ids else []
    return _periods_by_vehicle(periods, {p.id: p for p in _with_limits(policy_rows(columns))})


def _periods_by_vehicle(periods, policies: dict[int, PolicyRow]) -> dict[int, list[PeriodRow]]:
    width = len(PERIOD_COLUMNS)
    grouped: dict[int, list[PeriodRow]] = defaultdict(list)
    for period in periods:
        grouped[period[1]].append(PeriodRow(*period[:width], policies[period[2]]))
    return grouped


def _vehicle_set(agencies: list[int] | None):
    return Vehicle.objects.for_agencies(agencies).live("client")


def _vehicles(agencies: list[int] | None):
    return _vehicle_set(agencies).order_by("id").values_list(*VEHICLE_COLUMNS)


# A VIN or a plate (a few units) is read with the periods covering each unit on D, their
# policies and the policies' limits in one statement: two outer joins state `covered_q`'s two
# halves, the period covering D (`period_covers_q`) and its policy in force on D
# (`in_force_q`), so a period row whose policy is NULL covers D under a policy not in force:
# not coverage, and dropped. One row per limit; a unit without coverage, one row of NULLs. A
# batch's 1,000 units keep three statements: a handful of policies' columns repeated on each
# of 1,000 rows cost more than two statements.
_PERIOD, _POLICY = "period_covering", "period_policy_in_force"
_UNIT_COLUMNS = (
    *VEHICLE_COLUMNS,
    *(f"{_PERIOD}__{column}" for column in PERIOD_COLUMNS),
    *(f"{_POLICY}__{column}" for column in POLICY_COLUMNS),
    f"{_POLICY}__limits__name",
    f"{_POLICY}__limits__amount",
)


def _with_periods(vehicles, on: dt.date):
    return (
        vehicles.annotate(
            **{
                _PERIOD: FilteredRelation(
                    "coverages", condition=period_covers_q(on, "coverages__")
                ),
                _POLICY: FilteredRelation(
                    f"{_PERIOD}__policy", condition=in_force_q(on, f"{_PERIOD}__policy__")
                ),
            }
        )
        .order_by(
            "id",
            f"{_POLICY}__coverage_type__code",
            f"{_PERIOD}__policy_added_date",
            f"{_PERIOD}__id",
            f"{_POLICY}__limits__position",
            f"{_POLICY}__limits__id",
        )
        .values_list(*_UNIT_COLUMNS)
    )


def _units_and_periods(rows) -> tuple[list[VehicleRow], dict[int, list[PeriodRow]]]:
    """Unit rows and each one's covering periods (with their policies and limits) from
    `_with_periods`: a policy's limits are read off the rows of the first period that has it
    (another period on the same policy repeats them)."""
    start = len(VEHICLE_COLUMNS)
    policy = start + len(PERIOD_COLUMNS)
    name = policy + len(POLICY_COLUMNS)
    vehicles = vehicle_rows({row[0]: row[:start] for row in rows}.values())
    periods: dict[int, tuple] = {}
    columns: dict[int, tuple] = {}
    first: dict[int, int] = {}  # policy id -> the period whose rows carry its limits
    limits: dict[int, list[LimitRow]] = defaultdict(list)
    for row in rows:
        if row[policy] is None:  # no period covering D, or one under a policy not in force
            continue
        period_id, policy_id = row[start], row[policy]
        if period_id not in periods:
            periods[period_id] = row[start:policy]
        if policy_id not in columns:
            columns[policy_id], first[policy_id] = row[policy:name], period_id
        if row[name] is not None and first[policy_id] == period_id:  # NULL: no limit
            limits[policy_id].append(new_limit((row[name], row[name + 1])))
    policies = {row.id: row for row in policy_rows(columns.values())}
    for policy_id, rows_of_policy in limits.items():
        policies[policy_id].limits.extend(rows_of_policy)
    return vehicles, _periods_by_vehicle(periods.values(), policies)


def _by_plate(agencies: list[int] | None, key: str, state: int | None, on: dt.date):
    return _with_periods(_vehicle_set(agencies).with_plate(key, state), on)


_UNITS_BY_VIN = PreparedQuery(
    lambda agencies, vin, on: _with_periods(_vehicle_set(agencies).filter(serial_number=vin), on)
)
_UNITS_BY_PLATE = PreparedQuery(_by_plate)
_VEHICLES_BY_KEYS = PreparedQuery(
    lambda agencies, vins, plates: _vehicles(agencies).filter(
        Q(serial_number__in_list=vins) | Q(license_plate_key__in_list=plates)
    ),
    arrays=("vins", "plates"),
)


class VehicleVerification(NamedTuple):
    """One answer of vehicle verification, shaped by `VehicleVerificationSerializer` (and, with
    the key asked for, by `FleetEntrySerializer`): the unit found (None: not found; its client
    is `vehicle.client`), the periods covering it on D (each with its `policy`) and what was
    computed of them."""

    vehicle: VehicleRow | None
    periods: list[PeriodRow]
    on: dt.date
    verified: bool
    status: str
    checked: bool
    compliance: Verdict | None
    key_name: str | None = None  # the batch: "vin" or "license_plate", and the key asked
    key: str | None = None
    key_state: str | None = None  # the batch: the plate's state, as asked (None: not named)
    # The batch: the states a plate named without one matched, when several (None: not so).
    plate_states: list[str | None] | None = None

    @property
    def found(self) -> bool:
        return self.vehicle is not None


def _vehicle_verification(
    vehicle: VehicleRow | None,
    periods: list[PeriodRow],
    on: dt.date,
    profile: ProfileChoice | None,
    client_policies: dict[int, list[PolicyRow]],
    schedules: dict[int, dict[int, list[SchedulingRow]]],
    key_name: str | None = None,
    key: str | None = None,
    key_state: str | None = None,
    plate_states: list[str | None] | None = None,
) -> VehicleVerification:
    checked = profile is not None
    if vehicle is None:
        return VehicleVerification(
            None, [], on, False, NOT_FOUND, checked, None, key_name, key, key_state
        )
    compliance = None  # without a profile: no list of the unit's policies for each of 1,000
    if checked:
        compliance = _compliance(
            profile,
            vehicle.client,
            client_policies.get(vehicle.client_id, []),
            on,
            unit_policies=[p.policy for p in periods],
            unit_schedule=schedules.get(vehicle.id, {}),
        )
    status = ACTIVE if periods else INACTIVE
    return VehicleVerification(
        vehicle,
        periods,
        on,
        bool(periods),
        status,
        checked,
        compliance,
        key_name,
        key,
        key_state,
        plate_states,
    )


def verify_vehicles(
    *,
    user,
    on: dt.date,
    vin: str | None = None,
    license_plate: str | None = None,
    license_plate_state=None,
    profile: ProfileChoice | None = None,
) -> list[VehicleVerification]:
    """Every visible vehicle matching the VIN or the plate, with what covers it on D (and,
    with a profile, its compliance: the client's policies are then read too, two queries)."""
    agencies = agency_ids_for(user)
    if vin is not None:
        rows = _UNITS_BY_VIN.fetch(agencies=agencies, vin=vin, on=on)
    else:
        state = None if license_plate_state is None else license_plate_state.pk
        rows = _UNITS_BY_PLATE.fetch(
            agencies=agencies, key=plate_key(license_plate), state=state, on=on
        )
    vehicles, periods = _units_and_periods(rows)
    client_policies = _unit_clients_policies(profile, vehicles, on)
    schedules = _unit_schedules(profile, vehicles, on)
    return [
        _vehicle_verification(
            vehicle, periods.get(vehicle.id, []), on, profile, client_policies, schedules
        )
        for vehicle in vehicles
    ]


def _unit_clients_policies(profile, vehicles: list[VehicleRow], on: dt.date) -> dict:
    if profile is None:
        return {}
    return policies_by_client({v.client_id for v in vehicles}, on)


_SCHEDULINGS = PreparedQuery(
    lambda vehicles, on: (
        VehicleCoverage.objects.filter(vehicle_id__in_list=vehicles)
        .filter(not_ended_q(on, "policy__"))
        .order_by()
        .values_list(*SCHEDULING_COLUMNS)
    ),
    arrays=("vehicles",),
)


def _unit_schedules(profile, vehicles: list[VehicleRow], on: dt.date) -> dict:
    """Each unit's periods on policies not ended on D, by policy id (one query), where a
    renewal is looked for: only with a profile that has an expiration notice."""
    if profile is None or not profile.notices:
        return {}
    schedules: dict[int, dict[int, list[SchedulingRow]]] = defaultdict(lambda: defaultdict(list))
    new_row = tuple_constructor(SchedulingRow)
    for row in _SCHEDULINGS.fetch(vehicles=[v.id for v in vehicles], on=on):
        schedules[row[0]][row[1]].append(new_row(row))
    return schedules


class VerificationAnswer(NamedTuple):
    """What a client or vehicle verification answers: its results and the date they are for."""

    results: list
    on: dt.date


class FleetSummary(NamedTuple):
    """The batch's counts (`FleetSummarySerializer`); `compliance`, with a profile: how many
    found units got each result, keyed by the result (`RESULTS`)."""

    requested: int
    covered: int
    uncovered: int
    not_found: int
    compliance: dict[str, int] | None


class FleetVerification(NamedTuple):
    results: list[VehicleVerification]
    summary: FleetSummary
    on: dt.date


class PlateLookup(NamedTuple):
    """A plate the batch asks about, as sent, and the state it names (None: any), with that
    state as sent (echoed by its entry)."""

    plate: str
    state: State | None = None
    state_sent: str | None = None


def _state_code(vehicle: VehicleRow) -> str | None:
    state = vehicle.license_plate_state
    return None if state is None else state.code


def _plate_states(matches: list[VehicleRow]) -> list[str | None]:
    """The states of the units a plate matched, by code (a unit without one: None, last)."""
    codes = {_state_code(v) for v in matches}
    return sorted(codes, key=lambda code: (code is None, code or ""))


def _severity(verification: VehicleVerification) -> int:
    """How bad an entry's verdict is: FAIL above CAUTION above PASS (`RESULTS`, best first)."""
    compliance = verification.compliance
    return -1 if compliance is None else RESULTS.index(compliance.result)


def verify_fleet(
    *,
    user,
    on: dt.date,
    vins: list[str],
    plates: list[PlateLookup],
    profile: ProfileChoice | None = None,
) -> FleetVerification:
    """The fleet gap check: one entry per requested unit, and a summary (with a profile, each
    unit's compliance and the count per result).

    A plate names units by `with_plate`'s rule (`has_plate`), of its state when the entry names
    one. Units of one plate and state (or of one VIN) are one truck, scheduled under several
    clients: a covered one answers. A plate sent without a state that units of several states
    carry names several trucks: the entry is verified only when each of them is covered, else
    the first uncovered one (by id) answers, so the gap shows; it lists the states matched.
    With a profile the entry judges the truck it shows, so the worst-judged one (FAIL, then
    CAUTION) answers instead when it is worse than that one."""
    keys = [plate_key(p.plate) for p in plates]
    # Each unit's client comes in the same row; its row is built once (`vehicle_rows`).
    found = _VEHICLES_BY_KEYS.fetch(agencies=agency_ids_for(user), vins=vins, plates=keys)
    vehicles = vehicle_rows(found)
    periods = covering_period_rows((v.id for v in vehicles), on)
    client_policies = _unit_clients_policies(profile, vehicles, on)
    schedules = _unit_schedules(profile, vehicles, on)
    by_vin: dict[str, list[VehicleRow]] = defaultdict(list)
    by_plate: dict[str, list[VehicleRow]] = defaultdict(list)
    for vehicle in vehicles:  # in id order
        by_vin[vehicle.serial_number].append(vehicle)
        if vehicle.license_plate_key:
            by_plate[vehicle.license_plate_key].append(vehicle)

    def one_truck(matches: list[VehicleRow]) -> VehicleRow | None:
        # Several visible units of one truck (a VIN, a plate and state): a covered one answers
        # (one match, as almost every key has, answers without the search).
        best = matches[0] if matches else None
        if len(matches) > 1:
            best = next((v for v in matches if periods.get(v.id)), best)
        return best

    def entry(key_name: str, key: str, unit: VehicleRow | None, **asked) -> VehicleVerification:
        unit_periods = periods.get(unit.id, []) if unit else []
        return _vehicle_verification(
            unit, unit_periods, on, profile, client_policies, schedules, key_name, key, **asked
        )

    def plate_entry(lookup: PlateLookup, key: str) -> VehicleVerification:
        matches = by_plate.get(key, [])
        if lookup.state is not None:
            matches = [v for v in matches if has_plate(v, key, lookup.state.pk)]
            unit = one_truck(matches)
            return entry("license_plate", lookup.plate, unit, key_state=lookup.state_sent)
        states = _plate_states(matches) if len(matches) > 1 else ()
        if len(states) < 2:
            return entry("license_plate", lookup.plate, one_truck(matches))
        covered_states = {v.license_plate_state_id for v in matches if periods.get(v.id)}
        gap = next((v for v in matches if v.license_plate_state_id not in covered_states), None)
        shown = entry("license_plate", lookup.plate, gap or one_truck(matches), plate_states=states)
        if profile is None:
            return shown
        # With a profile the entry judges the unit it shows, so it shows the worst-judged truck
        # (one per state, as a plate and state is one truck); among equals, the one shown without.
        by_state: dict[int | None, list[VehicleRow]] = defaultdict(list)
        for vehicle in matches:
            by_state[vehicle.license_plate_state_id].append(vehicle)
        trucks = (one_truck(units) for units in by_state.values())
        judged = [shown] + [
            entry("license_plate", lookup.plate, truck, plate_states=states)
            for truck in trucks
            if truck.id != shown.vehicle.id
        ]
        return max(judged, key=_severity)  # the first of the worst

    results = [entry("vin", vin, one_truck(by_vin.get(vin, []))) for vin in dict.fromkeys(vins)]
    # A plate once however it is spelt (TX-4822B, tx 4822 b), and its state however it is named
    # (TX, Texas), as a VIN is once: the first spelling sent answers. The plate without a state
    # and the plate with one are two questions.
    first_spellings: dict[tuple[str, int | None], PlateLookup] = {}
    for key, lookup in zip(keys, plates, strict=True):
        first_spellings.setdefault((key, lookup.state.pk if lookup.state else None), lookup)
    results += [plate_entry(lookup, key) for (key, _state), lookup in first_spellings.items()]
    counts = None
    if profile is not None:
        verdicts = [r.compliance.result for r in results if r.compliance]
        counts = {result: verdicts.count(result) for result in RESULTS}
    summary = FleetSummary(
        requested=len(results),
        covered=sum(r.verified for r in results),
        uncovered=sum(r.found and not r.verified for r in results),
        not_found=sum(not r.found for r in results),
        compliance=counts,
    )
    return FleetVerification(results, summary, on)
