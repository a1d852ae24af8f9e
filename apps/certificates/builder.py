"""The ACORD 25 certificate of liability insurance (contract section 9): what it certifies.

The builder finds the records (the client, its policies in force, a page of its covered units)
and lays them out as the form does (insurer letters A to F, rows beyond them continued on a
remarks page); `apps.certificates.serializers.CertificateSerializer` shapes the result, for
the JSON answer and the PDF alike, so the two never disagree.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Prefetch
from rest_framework.exceptions import NotFound

from apps.certificates.numbers import certificate_number
from apps.clients.models import Client
from apps.core import counting
from apps.core.dates import today
from apps.core.identifiers import plate_key
from apps.core.models import live_q
from apps.coverages.models import VehicleCoverage
from apps.coverages.selectors import covering_periods
from apps.masterdata.models import Insurer, State
from apps.policies.models import Policy, PolicyLimit
from apps.vehicles.models import Vehicle

FORM = "ACORD 25"
FORM_EDITION = "2016/03"
LETTERS = "ABCDEF"
CANCELLATION = (
    "SHOULD ANY OF THE ABOVE DESCRIBED POLICIES BE CANCELLED BEFORE THE EXPIRATION DATE "
    "THEREOF, NOTICE WILL BE DELIVERED IN ACCORDANCE WITH THE POLICY PROVISIONS."
)
DISCLAIMER = (
    "THIS CERTIFICATE IS ISSUED AS A MATTER OF INFORMATION ONLY AND CONFERS NO RIGHTS UPON THE "
    "CERTIFICATE HOLDER. THIS CERTIFICATE DOES NOT AFFIRMATIVELY OR NEGATIVELY AMEND, EXTEND OR "
    "ALTER THE COVERAGE AFFORDED BY THE POLICIES BELOW."
)
REMARKS_TITLE = "Additional insurers and coverages (continued from the ACORD 25)"
# The ACORD 25 rows, in the form's order; other lines go to the "other" rows below them.
TYPE_OF_INSURANCE = {
    "GL": "COMMERCIAL GENERAL LIABILITY",
    "AL": "AUTOMOBILE LIABILITY",
    "NTL": "AUTOMOBILE LIABILITY (NON-TRUCKING)",
    "UMB": "UMBRELLA LIAB",
    "WC": "WORKERS COMPENSATION AND EMPLOYERS' LIABILITY",
}
ROW_ORDER = ["GL", "AL", "NTL", "UMB", "WC"]
# A client certificate lists its first scheduled units; vehicleCount tells how many there are.
VEHICLES_LISTED = 25
LIMITS = Prefetch("limits", queryset=PolicyLimit.objects.order_by("position", "id"))


@dataclass(frozen=True)
class Party:
    """The certificate holder, as the caller names it."""

    name: str
    address: str


@dataclass(frozen=True)
class InsurerLine:
    """An insurer and its letter on the form (A to F, then 7, 8… on the remarks page)."""

    letter: str
    insurer: Insurer | None  # None: the policies that name no insurer

    @property
    def name(self) -> str:
        return self.insurer.name if self.insurer else ""

    @property
    def naic(self) -> str:
        return self.insurer.naic if self.insurer else ""


@dataclass(frozen=True)
class CoverageRow:
    """One policy on the form, under its insurer's letter."""

    insurer_letter: str
    policy: Policy

    @property
    def type_of_insurance(self) -> str:
        line = self.policy.coverage_type
        return TYPE_OF_INSURANCE.get(line.code, f"OTHER: {line.name}")

    @property
    def policy_number(self) -> str:
        return self.policy.policy_number or ""

    @property
    def covered_autos(self) -> str | None:
        policy = self.policy
        return policy.get_covered_autos_display() if policy.covered_autos else None


@dataclass(frozen=True)
class Remarks:
    """The insurers and coverages the form has no room for."""

    title: str
    insurers: list[InsurerLine]
    coverages: list[CoverageRow]


@dataclass(frozen=True)
class Certificate:
    """What one certificate certifies, laid out on the form."""

    certificate_number: str
    as_of: dt.date
    client: Client  # with its agency, producer, city and state
    insurers: list[InsurerLine]  # on the form: A to F
    coverages: list[CoverageRow]  # on the form
    additional_remarks: list[Remarks]
    description_of_operations: str
    vehicles: list[Vehicle]  # with their makes
    vehicle_count: int
    certificate_holder: Party
    date_issued: dt.date = field(default_factory=today)
    form: str = FORM
    form_edition: str = FORM_EDITION
    disclaimer: str = DISCLAIMER
    cancellation: str = CANCELLATION

    @property
    def verify_at(self) -> str:
        return f"/v1/certificates/{self.certificate_number}"


def _order(policy: Policy) -> tuple:
    code = policy.coverage_type.code
    rank = ROW_ORDER.index(code) if code in ROW_ORDER else len(ROW_ORDER)
    return rank, code, policy.effective_date, policy.id


def _lettered(policies: Iterable[Policy]) -> tuple[list[InsurerLine], list[CoverageRow]]:
    """Each insurer lettered in the order of its first row; every policy under its letter."""
    ordered = sorted(policies, key=_order)
    letters: dict[int | None, InsurerLine] = {}
    for policy in ordered:
        if policy.insurer_id not in letters:
            n = len(letters)
            letter = LETTERS[n] if n < len(LETTERS) else f"{n + 1}"
            letters[policy.insurer_id] = InsurerLine(letter, policy.insurer)
    rows = [CoverageRow(letters[p.insurer_id].letter, p) for p in ordered]
    return list(letters.values()), rows


def _assemble(
    *,
    kind: str,
    record_id: int,
    client: Client,
    policies: list[Policy],
    vehicles: list[Vehicle],
    vehicle_count: int,
    on: dt.date,
    holder_name: str | None,
    holder_address: str | None,
    description: str,
) -> Certificate:
    insurers, rows = _lettered(policies)
    overflow = [row for row in rows if row.insurer_letter not in LETTERS]
    remarks = []
    if overflow:
        extra = [line for line in insurers if line.letter not in LETTERS]
        remarks.append(Remarks(REMARKS_TITLE, extra, overflow))
    return Certificate(
        certificate_number=certificate_number(kind, record_id, on),
        as_of=on,
        client=client,
        insurers=[line for line in insurers if line.letter in LETTERS],
        coverages=[row for row in rows if row.insurer_letter in LETTERS],
        additional_remarks=remarks,
        description_of_operations=description,
        vehicles=vehicles,
        vehicle_count=vehicle_count,
        certificate_holder=Party((holder_name or "").strip(), (holder_address or "").strip()),
    )


class NothingInForce(NotFound):
    """The record was found (in the caller's agencies) but no policy of it is in force on the
    date: contract section 9's 404 "that says so"."""


def client_certificate(
    *,
    user,
    on: dt.date,
    client_id: int | None = None,
    dot: str | None = None,
    holder_name=None,
    holder_address=None,
) -> Certificate:
    """The certificate of a client from the policies in force on `on`; 404 if none."""
    clients = (
        Client.objects.for_user(user)
        .live()
        .select_related("agency", "producer", "state", "city")
        .order_by("id")
    )
    clients = list(
        clients.filter(pk=client_id) if client_id is not None else clients.filter(dot=dot)
    )
    if not clients:
        raise NotFound("No client matches.")
    policies = list(
        Policy.objects.filter(client__in=clients)
        .in_force_on(on)
        .select_related("coverage_type", "insurer")
        .prefetch_related(LIMITS)
    )
    in_force = {p.client_id for p in policies}
    client = next((c for c in clients if c.id in in_force), None)
    if client is None:
        raise NothingInForce(f"No policy is in force for this client on {on.isoformat()}.")
    policies = [p for p in policies if p.client_id == client.id]
    # The units are walked in the fleet index's order (client, unit, id) and each is kept if a
    # period covers it: the first 25 cost 25 index probes, not a join over the whole fleet.
    covered = (
        Vehicle.objects.live()
        .filter(client=client)
        .filter(Exists(VehicleCoverage.objects.filter(vehicle_id=OuterRef("pk")).covered_on(on)))
    )
    vehicles = list(covered.select_related("make").order_by("unit", "id")[:VEHICLES_LISTED])
    # Exact, never an estimate: counting.count() keeps it in the shared cache under its SQL
    # (the date included) and the data version that every write of a business record moves.
    # The count joins the fleet with its periods once (a hash semi-join), not a probe per unit.
    counted = Vehicle.objects.filter(
        pk__in=VehicleCoverage.objects.filter(live_q("vehicle"), vehicle__client=client)
        .covered_on(on)
        .values("vehicle_id")
    )
    vehicle_count = len(vehicles) if len(vehicles) < VEHICLES_LISTED else counting.count(counted)
    description = (
        f"Motor carrier operations. USDOT {client.dot}."
        if client.dot
        else "Operations of the insured."
    )
    if vehicle_count:
        description += f" {vehicle_count} scheduled unit(s) on file; see the vehicle schedule."
    return _assemble(
        kind="C",
        record_id=client.id,
        client=client,
        policies=policies,
        vehicles=vehicles,
        vehicle_count=vehicle_count,
        on=on,
        holder_name=holder_name,
        holder_address=holder_address,
        description=description,
    )


def _one_plate_state(vehicles: list[Vehicle]) -> None:
    """Refuse a lookup by plate whose units are registered in more than one state."""
    states = sorted({v.license_plate_state.name for v in vehicles if v.license_plate_state})
    if any(v.license_plate_state is None for v in vehicles) and states:
        states.append("no state")
    if len(states) > 1:
        named = ", ".join(states)
        raise ValidationError(
            {
                "license_plate_state": f"Units of several states have this plate ({named}): "
                "name its state, or ask by VIN."
            }
        )


def vehicle_certificate(
    *,
    user,
    on: dt.date,
    vehicle_id: int | None = None,
    vin: str | None = None,
    license_plate: str | None = None,
    license_plate_state: State | None = None,
    client_id: int | None = None,
    holder_name=None,
    holder_address=None,
) -> Certificate:
    """The certificate of one vehicle: only the coverages it is scheduled on, in force on `on`.
    By plate, the units verification finds by that plate and state (`with_plate`); a plate that
    units of several states carry, without its state, is a 400 on `licensePlateState` naming
    them: a certificate certifies one truck, and the covered one of them need not be the one
    asked about (verification lists each, with its state)."""
    vehicles = (
        Vehicle.objects.for_user(user)
        .live("client")
        .select_related(
            "make",
            "client",
            "client__agency",
            "client__producer",
            "client__state",
            "client__city",
            "license_plate_state",
        )
        .order_by("id")
    )
    if vehicle_id is not None:
        vehicles = vehicles.filter(pk=vehicle_id)
    elif vin is not None:
        vehicles = vehicles.filter(serial_number=vin)
    else:
        vehicles = vehicles.with_plate(plate_key(license_plate), license_plate_state)
    if client_id is not None:
        vehicles = vehicles.filter(client_id=client_id)
    vehicles = list(vehicles)
    if not vehicles:
        raise NotFound("No vehicle matches.")
    if license_plate is not None and license_plate_state is None:
        _one_plate_state(vehicles)
    periods = covering_periods((v.id for v in vehicles), on)
    vehicle = next((v for v in vehicles if periods.get(v.id)), None)
    if vehicle is None:
        raise NothingInForce(f"No policy is in force for this vehicle on {on.isoformat()}.")
    policies = list({p.policy_id: p.policy for p in periods[vehicle.id]}.values())
    description = (
        f"Scheduled unit: {vehicle.model_year} {vehicle.make.name}, unit {vehicle.unit}, "
        f"VIN {vehicle.serial_number}"
        + (f", plate {vehicle.license_plate}" if vehicle.license_plate else "")
        + "."
    )
    return _assemble(
        kind="V",
        record_id=vehicle.id,
        client=vehicle.client,
        policies=policies,
        vehicles=[vehicle],
        vehicle_count=1,
        on=on,
        holder_name=holder_name,
        holder_address=holder_address,
        description=description,
    )
