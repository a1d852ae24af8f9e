"""The ACORD 25 certificate of liability insurance, as data (contract section 9).

The same dictionary feeds the JSON answer and the PDF, so the two never disagree.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.db.models import Exists, OuterRef, Prefetch
from rest_framework.exceptions import NotFound

from apps.certificates.numbers import certificate_number
from apps.clients.models import Client
from apps.core import counting
from apps.core.dates import today
from apps.core.models import live_q
from apps.core.money import format_money
from apps.coverages.models import VehicleCoverage
from apps.coverages.selectors import covering_periods
from apps.policies.models import Policy, PolicyLimit
from apps.vehicles.models import Vehicle, plate_key

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


def _address(street: str, city, state, zip_code: str) -> str:
    place = ", ".join(
        part for part in (city.name if city else "", state.code if state else "") if part
    )
    tail = " ".join(part for part in (place, zip_code) if part)
    return "\n".join(part for part in (street, tail) if part)


def _producer(client: Client) -> dict:
    producer, agency = client.producer, client.agency
    if producer is not None:
        return {
            "name": agency.name,
            "contact_name": producer.contact_name or producer.name,
            "address": producer.address or agency.address,
            "phone": producer.phone or agency.phone,
            "email": producer.email or agency.email,
        }
    return {
        "name": agency.name,
        "contact_name": "",
        "address": agency.address,
        "phone": agency.phone,
        "email": agency.email,
    }


def _insured(client: Client) -> dict:
    return {
        "name": client.client_name,
        "address": _address(client.address, client.city, client.state, client.zip_code),
        "dot": client.dot,
    }


def _order(policy: Policy) -> tuple:
    code = policy.coverage_type.code
    rank = ROW_ORDER.index(code) if code in ROW_ORDER else len(ROW_ORDER)
    return rank, code, policy.effective_date, policy.id


def _coverage_rows(policies: Iterable[Policy]) -> tuple[list[dict], list[dict], list[dict]]:
    """(insurers A-F, coverage rows on the form, rows continued on the remarks page)."""
    insurers: list[dict] = []
    letter_of: dict[int | None, str] = {}
    rows, overflow = [], []
    for policy in sorted(policies, key=_order):
        key = policy.insurer_id
        if key not in letter_of:
            letter_of[key] = f"{len(letter_of) + 1}"
            insurers.append(
                {
                    "letter": None,
                    "name": policy.insurer.name if policy.insurer_id else "",
                    "naic": policy.insurer.naic if policy.insurer_id else "",
                    "key": key,
                }
            )
    for index, insurer in enumerate(insurers):
        insurer["letter"] = LETTERS[index] if index < len(LETTERS) else f"{index + 1}"
        letter_of[insurer.pop("key")] = insurer["letter"]
    for policy in sorted(policies, key=_order):
        code = policy.coverage_type.code
        row = {
            "insurer_letter": letter_of[policy.insurer_id],
            "coverage_type": code,
            "type_of_insurance": TYPE_OF_INSURANCE.get(code, f"OTHER: {policy.coverage_type.name}"),
            "additional_insured": policy.additional_insured,
            "subrogation_waived": policy.subrogation_waived,
            "policy_number": policy.policy_number or "",
            "effective_date": policy.effective_date.isoformat(),
            "expiration_date": policy.expiration_date.isoformat(),
            "covered_autos": policy.get_covered_autos_display() if policy.covered_autos else None,
            "limits": [
                {"name": x.name, "amount": format_money(x.amount)} for x in policy.limits.all()
            ],
        }
        (rows if row["insurer_letter"] in LETTERS else overflow).append(row)
    return insurers, rows, overflow


def _vehicle_line(vehicle: Vehicle) -> dict:
    return {
        "year": vehicle.model_year,
        "make": vehicle.make.name,
        "unit": vehicle.unit,
        "vin": vehicle.serial_number,
    }


def _assemble(
    *,
    kind: str,
    record_id: int,
    client: Client,
    policies: list[Policy],
    vehicles: list[Vehicle],
    vehicle_count: int,
    on: dt.date,
    holder: dict,
    description: str,
) -> dict:
    insurers, rows, overflow = _coverage_rows(policies)
    number = certificate_number(kind, record_id, on)
    remarks = []
    if overflow:
        remarks.append(
            {
                "title": "Additional insurers and coverages (continued from the ACORD 25)",
                "insurers": [i for i in insurers if i["letter"] not in LETTERS],
                "coverages": overflow,
            }
        )
    return {
        "form": FORM,
        "form_edition": FORM_EDITION,
        "certificate_number": number,
        "date_issued": today().isoformat(),
        "as_of": on.isoformat(),
        "disclaimer": DISCLAIMER,
        "producer": _producer(client),
        "insured": _insured(client),
        "insurers": [i for i in insurers if i["letter"] in LETTERS],
        "coverages": rows,
        "description_of_operations": description,
        "vehicles": [_vehicle_line(v) for v in vehicles],
        "vehicle_count": vehicle_count,
        "certificate_holder": holder,
        "cancellation": CANCELLATION,
        "authorized_representative": _producer(client)["contact_name"] or client.agency.name,
        "additional_remarks": remarks,
        "verify_at": f"/v1/certificates/{number}",
    }


def _holder(name: str | None, address: str | None) -> dict:
    return {"name": (name or "").strip(), "address": (address or "").strip()}


def client_certificate(
    *,
    user,
    on: dt.date,
    client_id: int | None = None,
    dot: str | None = None,
    holder_name=None,
    holder_address=None,
) -> dict:
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
        raise NotFound(f"No policy is in force for this client on {on.isoformat()}.")
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
        holder=_holder(holder_name, holder_address),
        description=description,
    )


def vehicle_certificate(
    *,
    user,
    on: dt.date,
    vehicle_id: int | None = None,
    vin: str | None = None,
    license_plate: str | None = None,
    client_id: int | None = None,
    holder_name=None,
    holder_address=None,
) -> dict:
    """The certificate of one vehicle: only the coverages it is scheduled on, in force on `on`."""
    vehicles = (
        Vehicle.objects.for_user(user)
        .live("client")
        .select_related(
            "make", "client", "client__agency", "client__producer", "client__state", "client__city"
        )
        .order_by("id")
    )
    if vehicle_id is not None:
        vehicles = vehicles.filter(pk=vehicle_id)
    elif vin is not None:
        vehicles = vehicles.filter(serial_number=vin)
    else:
        vehicles = vehicles.filter(license_plate_key=plate_key(license_plate))
    if client_id is not None:
        vehicles = vehicles.filter(client_id=client_id)
    vehicles = list(vehicles)
    if not vehicles:
        raise NotFound("No vehicle matches.")
    periods = covering_periods((v.id for v in vehicles), on)
    vehicle = next((v for v in vehicles if periods.get(v.id)), None)
    if vehicle is None:
        raise NotFound(f"No policy is in force for this vehicle on {on.isoformat()}.")
    policies = list({p.policy_id: p.policy for p in periods[vehicle.id]}.values())
    line = _vehicle_line(vehicle)
    description = (
        f"Scheduled unit: {line['year']} {line['make']}, unit {line['unit']}, VIN {line['vin']}"
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
        holder=_holder(holder_name, holder_address),
        description=description,
    )
