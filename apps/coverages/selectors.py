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

from django.db.models import Exists, OuterRef, Q

from apps.clients.models import Client
from apps.compliance.evaluation import verdict
from apps.compliance.selectors import ProfileChoice
from apps.core.money import format_money
from apps.coverages.choices import CoverageStatus
from apps.coverages.models import VehicleCoverage
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
# policies are not 300 full rows, 300 types and 300 insurers of every column.
POLICY_COLUMNS = (
    "client_id",
    "policy_number",
    "effective_date",
    "expiration_date",
    "cancellation_date",
    "additional_insured",
    "subrogation_waived",
    "deleted",
    "coverage_type__code",
    "coverage_type__name",
    "coverage_type__schedules_units",
    "insurer__name",
    "insurer__naic",
    "insurer__am_best_rating",
)


# What vehicle verification reads of a unit and its client (`vehicle_ref`, `client_ref`, the
# compliance verdict): a batch of 1,000 units does not load every column of 1,000 rows.
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
    rows = (
        PolicyLimit.objects.filter(policy_id__in=list(by_id))
        .order_by("policy_id", "position", "id")
        .values_list("policy_id", "name", "amount")
    )
    for policy_id, name, amount in rows:
        by_id[policy_id].prefetched_limits.append(LimitRow(name, amount))


def client_ref(client: Client) -> dict:
    return {
        "id": client.id,
        "client_name": client.client_name,
        "dot": client.dot,
        "agency_id": client.agency_id,
        "agency_name": client.agency.name,
    }


def coverage_ref(policy: Policy, on: dt.date) -> dict:
    return {
        "policy_id": policy.id,
        "policy_number": policy.policy_number,
        "coverage_type": policy.coverage_type.code,
        "coverage_type_name": policy.coverage_type.name,
        "insurer_name": policy.insurer.name if policy.insurer_id else None,
        "naic": policy.insurer.naic if policy.insurer_id else None,
        "am_best_rating": (policy.insurer.am_best_rating or None) if policy.insurer_id else None,
        "effective_date": policy.effective_date.isoformat(),
        "expiration_date": policy.expiration_date.isoformat(),
        "status": policy.status_on(on),
        "limits": [{"name": x.name, "amount": format_money(x.amount)} for x in policy.limit_rows()],
    }


def vehicle_ref(vehicle: Vehicle) -> dict:
    return {
        "id": vehicle.id,
        "vin": vehicle.serial_number,
        "unit": vehicle.unit,
        "model_year": vehicle.model_year,
        "make": vehicle.make.name,
        "license_plate": vehicle.license_plate,
        "license_plate_state": vehicle.license_plate_state.code
        if vehicle.license_plate_state_id
        else None,
    }


def policies_by_client(client_ids: Iterable[int], on: dt.date) -> dict[int, list[Policy]]:
    """The live policies not ended on D (in force, or starting later), per client, with what
    verification and compliance read (two queries); compliance monitoring uses it too."""
    policies = list(
        Policy.objects.live()
        .not_ended_on(on)
        .filter(client_id__in=list(client_ids))
        .select_related("coverage_type", "insurer")
        .only(*POLICY_COLUMNS)
        .order_by("coverage_type__code", "effective_date", "id")
    )
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
) -> dict:
    """`{"compliance": …}` when a profile was asked for (None for what was not found)."""
    if profile is None:
        return {}
    if client is None:
        return {"compliance": None}
    compiled = profile.for_agency(client.agency_id)
    return {
        "compliance": verdict(
            compiled,
            policies=policies,
            cargo_class=client.cargo_class,
            on=on,
            unit_policies=unit_policies,
        )
    }


def _client_result(
    dot: str | None,
    client: Client | None,
    policies: list[Policy],
    on,
    profile: ProfileChoice | None = None,
) -> dict:
    if client is None:
        return {
            "dot": dot,
            "found": False,
            "verified": False,
            "status": NOT_FOUND,
            "client": None,
            "coverages": [],
            **_compliance(profile, None, [], on),
        }
    coverages = [coverage_ref(p, on) for p in policies]
    in_force = any(c["status"] == PolicyStatus.ACTIVE for c in coverages)
    return {
        "dot": client.dot if dot is None else dot,
        "found": True,
        "verified": in_force,
        "status": ACTIVE if in_force else INACTIVE,
        "client": client_ref(client),
        "coverages": coverages,
        **_compliance(profile, client, policies, on),
    }


def verify_clients(
    *,
    user,
    on: dt.date,
    dots: list[str] | None = None,
    client_id: int | None = None,
    profile: ProfileChoice | None = None,
) -> list[dict]:
    """One result per requested DOT (request order, duplicates once), or one for the client id;
    with a profile, each found client's compliance, computed from the policies read anyway."""
    clients = (
        Client.objects.for_user(user)
        .live()
        .select_related("agency")
        .only("client_name", "dot", "cargo_class", "agency__name")
    )
    if client_id is not None:
        clients = list(clients.filter(pk=client_id))
    else:
        clients = list(clients.filter(dot__in=dots).order_by("id"))
    policies = policies_by_client((c.id for c in clients), on)
    if client_id is not None:
        return [_client_result(None, c, policies.get(c.id, []), on, profile) for c in clients]

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
            _client_result(dot, client, policies.get(client.id, []) if client else [], on, profile)
        )
    return results


def covered_today_filter(on: dt.date) -> Exists:
    """SQL for 'this vehicle is covered on D': a covering period under a policy in force."""
    return Exists(VehicleCoverage.objects.filter(vehicle=OuterRef("pk")).covered_on(on))


def covering_periods(vehicle_ids: Iterable[int], on: dt.date) -> dict[int, list[VehicleCoverage]]:
    """Periods that cover each vehicle on D under a policy in force on D (three queries).

    A fleet of 1,000 units is covered by a handful of policies: each policy (with its type,
    insurer and limits) is read and built once and shared by its periods, not once per period
    as a select_related would (1,000 policy, type and insurer objects and 1,000 limit lists).
    """
    periods = list(
        VehicleCoverage.objects.filter(vehicle_id__in=list(vehicle_ids))
        .covered_on(on)
        .order_by("policy__coverage_type__code", "policy_added_date", "id")
    )
    policies = Policy.objects.select_related("coverage_type", "insurer").in_bulk(
        {period.policy_id for period in periods}
    )
    attach_limit_rows(policies.values())
    grouped: dict[int, list[VehicleCoverage]] = defaultdict(list)
    for period in periods:
        period.policy = policies[period.policy_id]
        grouped[period.vehicle_id].append(period)
    return grouped


def _vehicle_coverages(
    periods: list[VehicleCoverage], on: dt.date, refs: dict[int, dict] | None = None
) -> list[dict]:
    """The coverages of one unit; `refs` keeps each policy's part (read-only, shared by the
    units of one answer), built once per call."""
    refs = {} if refs is None else refs
    coverages = []
    for period in periods:
        ref = refs.get(period.policy_id)
        if ref is None:
            ref = refs[period.policy_id] = coverage_ref(period.policy, on)
        coverages.append(
            {
                **ref,
                "coverage_status": period.coverage_status,
                "coverage_status_name": CoverageStatus(period.coverage_status).label,
                "policy_added_date": period.policy_added_date.isoformat(),
            }
        )
    return coverages


def _vehicles(user):
    return (
        Vehicle.objects.for_user(user)
        .live("client")
        .select_related("client", "client__agency", "make", "license_plate_state")
        .only(*VEHICLE_COLUMNS)
        .order_by("id")
    )


def verify_vehicles(
    *,
    user,
    on: dt.date,
    vin: str | None = None,
    license_plate: str | None = None,
    license_plate_state=None,
    profile: ProfileChoice | None = None,
) -> list[dict]:
    """Every visible vehicle matching the VIN or the plate, with what covers it on D (and,
    with a profile, its compliance: the client's policies are then read too, two queries)."""
    vehicles = _vehicles(user)
    if vin is not None:
        vehicles = vehicles.filter(serial_number=vin)
    else:
        vehicles = vehicles.filter(license_plate_key=plate_key(license_plate))
        if license_plate_state is not None:
            vehicles = vehicles.filter(license_plate_state=license_plate_state)
    vehicles = list(vehicles)
    periods = covering_periods((v.id for v in vehicles), on)
    client_policies = _unit_clients_policies(profile, vehicles, on)
    results = []
    for vehicle in vehicles:
        unit_periods = periods.get(vehicle.id, [])
        coverages = _vehicle_coverages(unit_periods, on)
        results.append(
            {
                "vehicle": vehicle_ref(vehicle),
                "client": client_ref(vehicle.client),
                "verified": bool(coverages),
                "status": ACTIVE if coverages else INACTIVE,
                "coverages": coverages,
                **_unit_compliance(profile, vehicle, client_policies, unit_periods, on),
            }
        )
    return results


def _unit_clients_policies(profile, vehicles: list[Vehicle], on: dt.date) -> dict:
    if profile is None:
        return {}
    return policies_by_client({v.client_id for v in vehicles}, on)


def _unit_compliance(profile, vehicle, client_policies: dict, periods, on) -> dict:
    return _compliance(
        profile,
        vehicle.client,
        client_policies.get(vehicle.client_id, []),
        on,
        unit_policies=[p.policy for p in periods],
    )


def verify_fleet(
    *,
    user,
    on: dt.date,
    vins: list[str],
    plates: list[str],
    profile: ProfileChoice | None = None,
) -> dict:
    """The fleet gap check: one entry per requested unit, and a summary (with a profile, each
    unit's compliance and the count per result)."""
    keys = [plate_key(p) for p in plates]
    # The units of a batch mostly share one client: read each client (and agency) once, not
    # once per unit through a join (one query more, a thousand objects fewer).
    vehicles = list(
        _vehicles(user)
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
    refs: dict[int, dict] = {}  # each policy's part of a coverage, built once
    client_refs: dict[int, dict] = {}

    def entry(key_name: str, key: str, matches: list[Vehicle]) -> dict:
        if not matches:
            return {
                key_name: key,
                "found": False,
                "verified": False,
                "status": NOT_FOUND,
                "vehicle": None,
                "client": None,
                "coverages": [],
                **_compliance(profile, None, [], on),
            }
        # Several visible vehicles may share a VIN or plate: a covered one answers.
        best = next((v for v in matches if periods.get(v.id)), matches[0])
        unit_periods = periods.get(best.id, [])
        coverages = _vehicle_coverages(unit_periods, on, refs)
        client = client_refs.get(best.client_id)
        if client is None:
            client = client_refs[best.client_id] = client_ref(best.client)
        return {
            key_name: key,
            "found": True,
            "verified": bool(coverages),
            "status": ACTIVE if coverages else INACTIVE,
            "vehicle": vehicle_ref(best),
            "client": client,
            "coverages": coverages,
            **_unit_compliance(profile, best, client_policies, unit_periods, on),
        }

    results = [entry("vin", vin, by_vin.get(vin, [])) for vin in dict.fromkeys(vins)]
    results += [
        entry("license_plate", plate, by_plate.get(plate_key(plate), []))
        for plate in dict.fromkeys(plates)
    ]
    summary = {
        "requested": len(results),
        "covered": sum(r["verified"] for r in results),
        "uncovered": sum(r["found"] and not r["verified"] for r in results),
        "not_found": sum(not r["found"] for r in results),
    }
    if profile is not None:
        verdicts = [r["compliance"]["result"] for r in results if r["compliance"]]
        summary["compliance"] = {v.lower(): verdicts.count(v) for v in ("PASS", "CAUTION", "FAIL")}
    return {"results": results, "summary": summary}
