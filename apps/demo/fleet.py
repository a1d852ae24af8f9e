"""The demo fleet: policies in force, future and expired; units, drivers and their coverages.

Terms follow the calendar year of the day the demo is seeded, so the demo stays true:
this year's policies are in force, last year's expired, next year's in the future.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from decimal import Decimal

from django.core.files.base import ContentFile

from apps.core.dates import today
from apps.coverages.models import DriverCoverage, VehicleCoverage
from apps.coverages.services import DRIVER, VEHICLE, coverage_assign, coverage_update
from apps.drivers.models import Driver, DriverVehicle
from apps.drivers.services import driver_create, driver_vehicle_link
from apps.masterdata.models import (
    CoverageType,
    DriverType,
    Insurer,
    LicenseType,
    Make,
    UnitType,
)
from apps.policies.models import Policy
from apps.policies.services import policy_create
from apps.vehicles.models import Lienholder, Vehicle
from apps.vehicles.services import lienholder_create, vehicle_create

GWC = "Great West Casualty Company"
NORTHLAND = "Northland Insurance Company"


# The demo's units, in the order they are created (their ids are docs/api.md's): client, VIN,
# unit number, unit type, model year, make, plate, stated value, financed by the demo's bank.
# fmt: off
UNITS = (
    ("lone_star", "1FUJGLDR7CLBP8834", "101", "Tractor", 2021, "Freightliner", "TX-4821A", 145000, True),  # noqa: E501
    ("lone_star", "1XKYDP9X5MJ441234", "102", "Tractor", 2022, "Kenworth", "TX-4822B", 162000, True),  # noqa: E501
    ("lone_star", "1GRAA0621KB123456", "T-201", "Trailer", 2019, "Great Dane", "TX-7701T", 48000, False),  # noqa: E501
    ("lone_star", "1JJV532D8KL654321", "T-202", "Trailer", 2019, "Wabash", "TX-7702T", 42000, False),  # noqa: E501
    ("lone_star", "3AKJHHDR5LSLA1234", "103", "Tractor", 2020, "Freightliner", "TX-4823C", 98000, False),  # noqa: E501
    ("gulf", "1XPBDP9X1FD123457", "G-1", "Tractor", 2023, "Peterbilt", "TX-9911G", 175000, False),
    ("rival", "4V4NC9EH5LN223344", "R-1", "Tractor", 2020, "Volvo", "NE-5501R", 120000, False),
)
# fmt: on

# The demo's policies, in the order they are created: client, coverage type, insurer, number
# ({year}: the policy's), its year from this one (-1: last year's, expired; 1: next year's, in
# the future), limits, and the rest of the policy (rates: unit type, annual rate, rate per 100
# of stated value, minimum premium).
# fmt: off
POLICIES = (
    ("lone_star", "AL", GWC, "GWC-AL-{year}-0142", 0, [("Combined Single Limit", "1000000")],
     {"covered_autos": "SCHEDULED", "premium": Decimal("18400.00"),
      "rates": [("Tractor", "6000", "0", "0"), ("Trailer", "800", "0", "0")]}),
    ("lone_star", "APD", NORTHLAND, "NL-APD-{year}-7731", 0,
     [("Physical Damage (Stated Value)", "450000"), ("Deductible", "2500")],
     {"rates": [("Tractor", "0", "2.5000", "1500"), ("Trailer", "0", "2.0000", "400")]}),
    ("lone_star", "MTC", GWC, "GWC-MTC-{year}-0143", 0,
     [("Cargo Limit", "100000"), ("Deductible", "1000")], {}),
    ("lone_star", "GL", GWC, "GWC-GL-{year}-0144", 0,
     [("Each Occurrence", "1000000"), ("Damage to Rented Premises", "100000"),
      ("Medical Expense", "5000"), ("Personal & Adv Injury", "1000000"),
      ("General Aggregate", "2000000"), ("Products - Comp/Op Agg", "2000000")],
     {"additional_insured": True, "subrogation_waived": True}),
    ("lone_star", "OA", GWC, "GWC-OA-{year}-0145", 0, [("Occupational Accident", "500000")], {}),
    ("prairie", "AL", NORTHLAND, "NL-AL-{year}-2210", -1, [("Combined Single Limit", "1000000")],
     {"covered_autos": "ANY"}),
    ("gulf", "AL", GWC, "GWC-AL-{year}-0310", 1, [("Combined Single Limit", "750000")],
     {"covered_autos": "SCHEDULED"}),
    ("rival", "AL", NORTHLAND, "NL-AL-{year}-9001", 0, [("Combined Single Limit", "1000000")], {}),
)
# fmt: on


def _policy(
    admin, client, *, code: str, insurer: str, number: str, year: int, limits, rates=(), **extra
) -> Policy:
    carrier = Insurer.objects.get(name=insurer)
    policy = Policy.objects.live().filter(insurer=carrier, policy_number=number).first()
    if policy is not None:
        return policy
    return policy_create(
        user=admin,
        client_id=client.pk,
        insurer=carrier,
        policy_number=number,
        coverage_type=CoverageType.objects.get(code=code),
        effective_date=dt.date(year, 1, 1),
        expiration_date=dt.date(year + 1, 1, 1),
        state=client.state,
        limits=[{"name": name, "amount": Decimal(amount)} for name, amount in limits],
        rates=[
            {
                "unit_type": UnitType.objects.get(name=unit_type),
                "annual_rate": Decimal(annual),
                "rate_per_100_value": Decimal(per_100),
                "minimum_premium": Decimal(minimum),
            }
            for unit_type, annual, per_100, minimum in rates
        ],
        **extra,
    )


def _vehicle(admin, client, *, vin, unit, unit_type, year, make, plate, value, **extra) -> Vehicle:
    vehicle = Vehicle.objects.filter(client=client, serial_number=vin).first()
    if vehicle is not None:
        return vehicle
    return vehicle_create(
        user=admin,
        client_id=client.pk,
        serial_number=vin,
        unit=unit,
        unit_type=UnitType.objects.get(name=unit_type),
        model_year=year,
        make=Make.objects.get(name=make),
        license_plate=plate,
        license_plate_state=client.state,
        stated_value=Decimal(value),
        owner=client.client_name,
        garaging_address=f"{client.address}, {client.city.name}, {client.state.code}",
        **extra,
    )


def _driver(admin, client, first, last, driver_type, license_number, born) -> Driver:
    driver = Driver.objects.filter(client=client, first_name=first, last_name=last).first()
    if driver is not None:
        return driver
    return driver_create(
        user=admin,
        client_id=client.pk,
        first_name=first,
        last_name=last,
        driver_type=DriverType.objects.get(name=driver_type),
        license_number=license_number,
        license_state=client.state,
        dl_type=LicenseType.objects.get(name="CDL Class A"),
        date_of_birth=born,
        hire_date=dt.date(2019, 3, 1),
        license_expiration_date=dt.date(today().year + 3, 6, 30),
        state=client.state,
        city=client.city,
    )


def _schedule(admin, subject, target, policy, added: dt.date | None) -> None:
    model = VehicleCoverage if subject is VEHICLE else DriverCoverage
    if model.objects.filter(**{subject.field: target}, policy=policy).exists():
        return
    coverage_assign(
        user=admin,
        subject=subject,
        target_id=target.id,
        policy_id=policy.id,
        policy_added_date=added,
    )


def seed_fleet(world, *, admin) -> None:
    year = today().year
    start = dt.date(year, 1, 1)
    lone_star, gulf = world.clients["lone_star"], world.clients["gulf"]
    bank = Lienholder.objects.filter(agency=world.agency, name="First Freight Bank").first()
    bank = bank or lienholder_create(
        user=admin,
        agency_id=world.agency.pk,
        name="First Freight Bank",
        phone="800-555-0175",
        address="400 Commerce St, Fort Worth, TX 76102",
    )

    auto, damage, _cargo, _general, occupational, _expired, future, rival_auto = (
        _policy(
            admin,
            world.clients[client],
            code=code,
            insurer=insurer,
            number=number.format(year=year + offset),
            year=year + offset,
            limits=limits,
            **extra,
        )
        for client, code, insurer, number, offset, limits, extra in POLICIES
    )
    t1, t2, trailer, removed, unscheduled, gulf_truck, rival_truck = (
        _vehicle(
            admin,
            world.clients[client],
            vin=vin,
            unit=unit,
            unit_type=unit_type,
            year=model_year,
            make=make,
            plate=plate,
            value=value,
            **({"lienholder_id": bank.pk} if financed else {}),
        )
        for client, vin, unit, unit_type, model_year, make, plate, value, financed in UNITS
    )
    assert unscheduled.pk  # on the books, on no policy: the gap the fleet check finds

    for unit in (t1, t2, trailer):
        _schedule(admin, VEHICLE, unit, auto, start)
        _schedule(admin, VEHICLE, unit, damage, start)
    if not VehicleCoverage.objects.filter(vehicle=removed).exists():
        _schedule(admin, VEHICLE, removed, auto, start)
        coverage_update(
            user=admin,
            subject=VEHICLE,
            target_id=removed.id,
            policy_id=auto.id,
            coverage_status=1,
            policy_removed_date=max(start, today() - dt.timedelta(days=1)),
        )
    _schedule(admin, VEHICLE, gulf_truck, future, None)
    _schedule(admin, VEHICLE, rival_truck, rival_auto, dt.date(year, 1, 1))

    maria = _driver(
        admin, lone_star, "Maria", "Gonzalez", "Owner Operator", "TX12345678", dt.date(1984, 5, 17)
    )
    james = _driver(
        admin, lone_star, "James", "Walker", "Company Driver", "TX87654321", dt.date(1990, 11, 2)
    )
    _driver(admin, gulf, "Ana", "Lopez", "Lease Operator", "TX55512345", dt.date(1988, 2, 9))
    for driver, unit in ((maria, t1), (james, t2)):
        if not DriverVehicle.objects.filter(driver=driver, vehicle=unit).exists():
            driver_vehicle_link(user=admin, vehicle_id=unit.pk, driver_id=driver.pk)
    _schedule(admin, DRIVER, maria, occupational, start)


def seed_documents(world, *, admin) -> None:
    """A client document and a policy document, generated so the demo ships no binaries."""
    from apps.certificates.builder import client_certificate
    from apps.certificates.pdf import certificate_pdf
    from apps.documents.models import Document, Module
    from apps.documents.services import document_upload

    lone_star = world.clients["lone_star"]
    if Document.objects.filter(client=lone_star).exists():
        return
    certificate = client_certificate(user=admin, on=today(), client_id=lone_star.id)
    pdf = ContentFile(certificate_pdf(certificate), name="lone-star-coi.pdf")
    document_upload(
        user=admin,
        module=Module.CLIENT,
        owner_id=lone_star.id,
        file=pdf,
        sha256=hashlib.sha256(pdf.read()).hexdigest(),
        description="Certificate of insurance",
    )
    auto = Policy.objects.live().get(client=lone_star, coverage_type__code="AL")
    schedule = "\n".join(
        f"{c.vehicle.unit},{c.vehicle.serial_number},{c.policy_added_date}"
        for c in VehicleCoverage.objects.filter(policy=auto).select_related("vehicle")
    )
    csv = ContentFile(("unit,vin,added\n" + schedule + "\n").encode(), name="unit-schedule.csv")
    document_upload(
        user=admin,
        module=Module.POLICY,
        owner_id=auto.id,
        file=csv,
        sha256=hashlib.sha256(csv.read()).hexdigest(),
        description="Schedule of units",
    )


def seed_report(world, *, admin) -> None:
    """This month's premium report of Lone Star's auto liability policy (rates: tractor 6,000,
    trailer 800 a year), so each row can be checked by hand: annual x days / 365."""
    from apps.reports.models import PolicyPremiumReport
    from apps.reports.services import premium_report_create

    auto = Policy.objects.live().get(client=world.clients["lone_star"], coverage_type__code="AL")
    if not PolicyPremiumReport.objects.filter(policy=auto).exists():
        premium_report_create(user=admin, policy=auto)
