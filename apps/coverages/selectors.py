"""Real-time verification (contract section 8): a constant number of queries per call.

Each call reads the matching clients or vehicles in one query, then the policies (or the
coverage periods) that matter on the as-of date in one more, and their limits in a third;
nothing is fetched per DOT, per vehicle or per policy.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from decimal import Decimal
from typing import NamedTuple

from django.db.models import Exists, F, OuterRef, Q

from apps.agencies.models import Agency
from apps.clients.models import Client
from apps.compliance.evaluation import RESULTS, Verdict, verdict
from apps.compliance.selectors import ProfileChoice
from apps.core.models import agency_ids_for
from apps.core.prepared import PreparedQuery
from apps.coverages.models import VehicleCoverage
from apps.masterdata.models import CoverageType, Insurer
from apps.policies.choices import PolicyStatus
from apps.policies.models import Policy, PolicyLimit
from apps.vehicles.models import Vehicle, plate_key

ACTIVE, INACTIVE, NOT_FOUND = "ACTIVE", "INACTIVE", "NOT_FOUND"


class LimitRow(NamedTuple):
    """A policy's limit as verification and compliance read it (its name and amount)."""

    name: str
    amount: Decimal


# What verification and compliance read of a policy, its type and its insurer: the other
# columns (audit stamps, premium, description...) are left in the database, so 200 DOTs' 300
# policies are not 300 full rows. The type and the insurer are read in the same query and built
# once per distinct row (`_share_related`), not once per policy: 200 DOTs' 300 policies have a
# handful of types and insurers, and building 600 model objects was a fifth of the request.
POLICY_COLUMNS = (
    "client_id",
    "coverage_type_id",
    "insurer_id",
    "policy_number",
    "effective_date",
    "expiration_date",
    "cancellation_date",
    "additional_insured",
    "subrogation_waived",
    "deleted",
)
POLICY_SHARED = (
    ("coverage_type", CoverageType, ("code", "name", "schedules_units")),
    ("insurer", Insurer, ("name", "naic", "am_best_rating")),
)
# A client's agency as verification shows it (its name), one object per agency.
CLIENT_SHARED = (("agency", Agency, ("name",)),)


def _shared_columns(shared) -> dict[str, F]:
    """The related rows' columns, annotated as `_<relation>_<column>` (`_share_related`)."""
    return {
        f"_{relation}_{column}": F(f"{relation}__{column}")
        for relation, _model, columns in shared
        for column in columns
    }


def _share_related(instances: list, shared) -> None:
    """Set each instance's related objects from its annotated columns, one object per distinct
    related row, shared by the instances that point to it (read-only, as verification and
    compliance read them; the other columns deferred as `.only()` would leave them)."""
    if not instances:
        return
    model = type(instances[0])
    for relation, related_model, columns in shared:
        field = model._meta.get_field(relation)
        id_attr = field.attname
        # from_db takes the loaded columns in the model's field order.
        names = [
            f.attname
            for f in related_model._meta.concrete_fields
            if f.attname == "id" or f.attname in columns
        ]
        keys = [None if name == "id" else f"_{relation}_{name}" for name in names]
        made: dict[int, object] = {}
        for instance in instances:
            pk = getattr(instance, id_attr)
            if pk is None:
                field.set_cached_value(instance, None)
                continue
            related = made.get(pk)
            if related is None:
                values = [pk if key is None else getattr(instance, key) for key in keys]
                related = made[pk] = related_model.from_db(instance._state.db, names, values)
            field.set_cached_value(instance, related)


# What vehicle verification reads of a unit and its client (`VehicleRefSerializer`,
# `ClientRefSerializer`, the compliance verdict): a batch of 1,000 units does not load every
# column of 1,000 rows.
VEHICLE_COLUMNS = (
    "client_id",
    "unit",
    "model_year",
    "serial_number",
    "license_plate",
    "license_plate_key",
    "deleted",
    "make__name",
    "license_plate_state__code",
    "client__client_name",
    "client__dot",
    "client__cargo_class",
    "client__deleted",
    "client__agency__name",
)


def attach_limit_rows(policies: Iterable[Policy]) -> None:
    """Each policy's limits in order, as plain rows in `prefetched_limits` (read through
    `Policy.limit_rows()`), in one query: no model object, manager or queryset per policy or
    per limit (for 200 DOTs' 300 policies, a fifth of the request when prefetched as models)."""
    by_id = {policy.pk: policy for policy in policies}
    for policy in by_id.values():
        policy.prefetched_limits = []
    if not by_id:
        return
    for policy_id, name, amount in _LIMIT_ROWS.fetch(policies=list(by_id)):
        by_id[policy_id].prefetched_limits.append(LimitRow(name, amount))


# Verification's queries, each stated once as a queryset and compiled once per process for
# each shape of its values (apps.core.prepared): about half of a one-DOT call's Python was
# building and compiling these same statements again (issue 18).
_LIMIT_ROWS = PreparedQuery(
    lambda policies: (
        PolicyLimit.objects.filter(policy_id__in=policies)
        .order_by("policy_id", "position", "id")
        .values_list("policy_id", "name", "amount")
    )
)
_CLIENT_POLICIES = PreparedQuery(
    lambda clients, on: (
        Policy.objects.live()
        .not_ended_on(on)
        .filter(client_id__in=clients)
        .only(*POLICY_COLUMNS)
        .annotate(**_shared_columns(POLICY_SHARED))
        .order_by("coverage_type__code", "effective_date", "id")
    )
)


def policies_by_client(client_ids: Iterable[int], on: dt.date) -> dict[int, list[Policy]]:
    """The live policies not ended on D (in force, or starting later), per client, with what
    verification and compliance read (two queries); compliance monitoring uses it too."""
    policies = _CLIENT_POLICIES.fetch(clients=list(dict.fromkeys(client_ids)), on=on)
    _share_related(policies, POLICY_SHARED)
    attach_limit_rows(policies)
    grouped: dict[int, list[Policy]] = defaultdict(list)
    for policy in policies:
        grouped[policy.client_id].append(policy)
    return grouped


def _compliance(
    profile: ProfileChoice | None,
    client: Client | None,
    policies: list[Policy],
    on: dt.date,
    unit_policies: list[Policy] | None = None,
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
    )


class ClientVerification(NamedTuple):
    """One answer of client verification, shaped by `ClientVerificationSerializer`: the DOT
    asked, the client found (None: not found), its live policies not ended on D and what was
    computed of them (`checked`: a profile was asked for, so `compliance` is shown)."""

    dot: str | None
    client: Client | None
    policies: list[Policy]
    on: dt.date
    verified: bool
    status: str
    checked: bool
    compliance: Verdict | None

    @property
    def found(self) -> bool:
        return self.client is not None


def _client_verification(
    dot: str | None,
    client: Client | None,
    policies: list[Policy],
    on: dt.date,
    profile: ProfileChoice | None = None,
) -> ClientVerification:
    checked = profile is not None
    if client is None:
        return ClientVerification(dot, None, [], on, False, NOT_FOUND, checked, None)
    in_force = any(p.status_on(on) == PolicyStatus.ACTIVE for p in policies)
    return ClientVerification(
        client.dot if dot is None else dot,
        client,
        policies,
        on,
        in_force,
        ACTIVE if in_force else INACTIVE,
        checked,
        _compliance(profile, client, policies, on),
    )


def _clients(agencies: list[int] | None):
    return (
        Client.objects.for_agencies(agencies)
        .live()
        .only("client_name", "dot", "cargo_class", "agency_id")
        .annotate(**_shared_columns(CLIENT_SHARED))
    )


_CLIENT_BY_ID = PreparedQuery(lambda agencies, pk: _clients(agencies).filter(pk=pk))
_CLIENTS_BY_DOT = PreparedQuery(
    lambda agencies, dots: _clients(agencies).filter(dot__in=dots).order_by("id")
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
        clients = _CLIENT_BY_ID.fetch(agencies=agencies, pk=client_id)
    else:
        clients = _CLIENTS_BY_DOT.fetch(agencies=agencies, dots=list(dict.fromkeys(dots)))
    _share_related(clients, CLIENT_SHARED)
    policies = policies_by_client((c.id for c in clients), on)
    if client_id is not None:
        return [_client_verification(None, c, policies.get(c.id, []), on, profile) for c in clients]

    # A user of several agencies may see the same DOT twice: the verified client answers.
    by_dot: dict[str, Client] = {}
    for client in clients:
        current = by_dot.get(client.dot)
        in_force = any(p.in_force_on(on) for p in policies.get(client.id, []))
        if current is None or (
            in_force and not any(p.in_force_on(on) for p in policies.get(current.id, []))
        ):
            by_dot[client.dot] = client
    results = []
    for dot in dict.fromkeys(dots):
        client = by_dot.get(dot)
        results.append(
            _client_verification(
                dot, client, policies.get(client.id, []) if client else [], on, profile
            )
        )
    return results


def covered_today_filter(on: dt.date) -> Exists:
    """SQL for 'this vehicle is covered on D': a covering period under a policy in force."""
    return Exists(VehicleCoverage.objects.filter(vehicle=OuterRef("pk")).covered_on(on))


_COVERING_PERIODS = PreparedQuery(
    lambda vehicles, on: (
        VehicleCoverage.objects.filter(vehicle_id__in=vehicles)
        .covered_on(on)
        .order_by("policy__coverage_type__code", "policy_added_date", "id")
    )
)
_POLICIES = PreparedQuery(
    lambda pks: (
        Policy.objects.select_related("coverage_type", "insurer").filter(pk__in=pks).order_by()
    )
)


def covering_periods(vehicle_ids: Iterable[int], on: dt.date) -> dict[int, list[VehicleCoverage]]:
    """Periods that cover each vehicle on D under a policy in force on D (three queries).

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


def _vehicles(agencies: list[int] | None):
    return (
        Vehicle.objects.for_agencies(agencies)
        .live("client")
        .select_related("client", "client__agency", "make", "license_plate_state")
        .only(*VEHICLE_COLUMNS)
        .order_by("id")
    )


def _by_plate(agencies: list[int] | None, key: str, state: int | None):
    vehicles = _vehicles(agencies).filter(license_plate_key=key)
    return vehicles if state is None else vehicles.filter(license_plate_state=state)


_VEHICLES_BY_VIN = PreparedQuery(
    lambda agencies, vin: _vehicles(agencies).filter(serial_number=vin)
)
_VEHICLES_BY_PLATE = PreparedQuery(_by_plate)


class VehicleVerification(NamedTuple):
    """One answer of vehicle verification, shaped by `VehicleVerificationSerializer` (and, with
    the key asked for, by `FleetEntrySerializer`): the unit found (None: not found; its client
    is `vehicle.client`), the periods covering it on D (each with its `policy`) and what was
    computed of them."""

    vehicle: Vehicle | None
    periods: list[VehicleCoverage]
    on: dt.date
    verified: bool
    status: str
    checked: bool
    compliance: Verdict | None
    key_name: str | None = None  # the batch: "vin" or "license_plate", and the key asked
    key: str | None = None

    @property
    def found(self) -> bool:
        return self.vehicle is not None


def _vehicle_verification(
    vehicle: Vehicle | None,
    periods: list[VehicleCoverage],
    on: dt.date,
    profile: ProfileChoice | None,
    client_policies: dict[int, list[Policy]],
    key_name: str | None = None,
    key: str | None = None,
) -> VehicleVerification:
    checked = profile is not None
    if vehicle is None:
        return VehicleVerification(None, [], on, False, NOT_FOUND, checked, None, key_name, key)
    compliance = _compliance(
        profile,
        vehicle.client,
        client_policies.get(vehicle.client_id, []),
        on,
        unit_policies=[p.policy for p in periods],
    )
    status = ACTIVE if periods else INACTIVE
    return VehicleVerification(
        vehicle, periods, on, bool(periods), status, checked, compliance, key_name, key
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
        vehicles = _VEHICLES_BY_VIN.fetch(agencies=agencies, vin=vin)
    else:
        state = None if license_plate_state is None else license_plate_state.pk
        vehicles = _VEHICLES_BY_PLATE.fetch(
            agencies=agencies, key=plate_key(license_plate), state=state
        )
    periods = covering_periods((v.id for v in vehicles), on)
    client_policies = _unit_clients_policies(profile, vehicles, on)
    return [
        _vehicle_verification(vehicle, periods.get(vehicle.id, []), on, profile, client_policies)
        for vehicle in vehicles
    ]


def _unit_clients_policies(profile, vehicles: list[Vehicle], on: dt.date) -> dict:
    if profile is None:
        return {}
    return policies_by_client({v.client_id for v in vehicles}, on)


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


def verify_fleet(
    *,
    user,
    on: dt.date,
    vins: list[str],
    plates: list[str],
    profile: ProfileChoice | None = None,
) -> FleetVerification:
    """The fleet gap check: one entry per requested unit, and a summary (with a profile, each
    unit's compliance and the count per result)."""
    keys = [plate_key(p) for p in plates]
    # The units of a batch mostly share one client: read each client (and agency) once, not
    # once per unit through a join (one query more, a thousand objects fewer).
    vehicles = list(
        _vehicles(agency_ids_for(user))
        .select_related(None)
        .select_related("make", "license_plate_state")
        .filter(Q(serial_number__in=vins) | Q(license_plate_key__in=keys))
    )
    clients = Client.objects.select_related("agency").in_bulk({v.client_id for v in vehicles})
    for vehicle in vehicles:
        vehicle.client = clients[vehicle.client_id]
    periods = covering_periods((v.id for v in vehicles), on)
    client_policies = _unit_clients_policies(profile, vehicles, on)
    by_vin: dict[str, list[Vehicle]] = defaultdict(list)
    by_plate: dict[str, list[Vehicle]] = defaultdict(list)
    for vehicle in vehicles:
        by_vin[vehicle.serial_number].append(vehicle)
        if vehicle.license_plate_key:
            by_plate[vehicle.license_plate_key].append(vehicle)

    def entry(key_name: str, key: str, matches: list[Vehicle]) -> VehicleVerification:
        # Several visible vehicles may share a VIN or plate: a covered one answers.
        best = next((v for v in matches if periods.get(v.id)), matches[0]) if matches else None
        unit_periods = periods.get(best.id, []) if best else []
        return _vehicle_verification(
            best, unit_periods, on, profile, client_policies, key_name, key
        )

    results = [entry("vin", vin, by_vin.get(vin, [])) for vin in dict.fromkeys(vins)]
    results += [
        entry("license_plate", plate, by_plate.get(plate_key(plate), []))
        for plate in dict.fromkeys(plates)
    ]
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
