"""A fleet-scale dataset for benchmarks, written with COPY on PostgreSQL (bulk inserts elsewhere).

Two agencies: "Bench Large" with most clients, among them a 250,000-unit fleet and a
2,500-unit fleet, and "Bench Small" with 200 clients, so the same verification can be timed
against 20,000 clients and against 200. Every unit is scheduled on its client's auto liability
policy; one in twenty was removed last month.

The one writer around the services (issue 14's documented exception): clients, policies and
their limits and rates, vehicles, periods and drivers are copied in bulk, hundreds of thousands
of rows that no service could write in minutes, and announce nothing. The agencies, users,
memberships, API key and insurer go through their services like any other writer's.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable, Sequence
from decimal import Decimal

from django.db import connection, transaction
from django.utils import timezone

from apps.clients.models import Client
from apps.core.dates import today
from apps.coverages.models import VehicleCoverage
from apps.demo.access import agency_ensure, api_key_ensure, groups_ensure, user_ensure
from apps.drivers.models import Driver
from apps.masterdata.models import CoverageType, DriverType, Insurer, Make, State, UnitType
from apps.masterdata.services import masterdata_create
from apps.policies.models import Policy, PolicyLimit, PolicyRate
from apps.vehicles.models import Vehicle

BENCH_API_KEY = "bench-api-key"
BENCH_PASSWORD = "bench-password"
BIG_DOT, MEDIUM_DOT = "90000001", "90000002"
SMALL_FLEET = 25  # units of the client with DOT 10000002


def _copy(model, columns: Sequence[str], rows: Iterable[tuple]) -> int:
    """Insert rows (values in `columns` order, by attribute name) as fast as the backend allows."""
    fields = [model._meta.get_field(name) for name in columns]
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(model._meta.db_table)
        cols = ", ".join(connection.ops.quote_name(f.column) for f in fields)
        count = 0
        with connection.cursor() as cursor:
            raw = cursor.cursor  # psycopg 3
            with raw.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    count += 1
        return count
    objects = [model(**{f.attname: v for f, v in zip(fields, row, strict=True)}) for row in rows]
    model.objects.bulk_create(objects, batch_size=2000)
    return len(objects)


def _next_id(model) -> int:
    last = model.objects.order_by("-pk").values_list("pk", flat=True).first()
    return (last or 0) + 1


def _reset_sequences(*models) -> None:
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in models:
            table = model._meta.db_table
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT COALESCE(MAX(id), 1) FROM {table}))"
            )


def _vin(n: int) -> str:
    return f"1BNCH{n:012d}"  # 17 characters, all of the VIN alphabet


@transaction.atomic
def seed_bench(
    *,
    clients: int = 20_000,
    vehicles: int = 50_000,
    big_fleet: int = 250_000,
    medium_fleet: int = 2_500,
    drivers: int = 50_000,
    small_clients: int = 200,
    out=print,
) -> dict[str, int]:
    started = time.monotonic()
    if Client.objects.filter(dot=BIG_DOT).exists():
        out("bench data already present")
        return {}
    manager, _ = groups_ensure()
    # The superuser who creates the agencies and grants the memberships, as staff would.
    root = user_ensure("bench-admin", password=BENCH_PASSWORD, superuser=True)
    large, small = (agency_ensure(root, name=name) for name in ("Bench Large", "Bench Small"))
    for username, agency in (("bench-large", large), ("bench-small", small)):
        user_ensure(username, password=BENCH_PASSWORD, group=manager, agency=agency, by=root)
    api_key_ensure(name="Benchmarks", raw_key=BENCH_API_KEY)

    now = timezone.now()
    on = today()
    year_start = on.replace(month=1, day=1)
    texas = State.objects.get(code="TX")
    insurer = Insurer.objects.by_name("Bench Mutual").first() or masterdata_create(
        user=root, model=Insurer, name="Bench Mutual", naic="99999"
    )
    al = CoverageType.objects.get(code="AL")
    apd = CoverageType.objects.get(code="APD")
    tractor, trailer = UnitType.objects.get(name="Tractor"), UnitType.objects.get(name="Trailer")
    makes = list(Make.objects.values_list("id", "name"))  # a unit carries its make's name
    driver_type = DriverType.objects.get(name="Company Driver").id

    # Clients: the two big fleets first, then the rest of Bench Large, then Bench Small.
    first_client = _next_id(Client)
    cargo_class = Client._meta.get_field("cargo_class").default
    client_rows, client_agency = [], []
    for n in range(clients):
        agency = small if n >= clients - small_clients else large
        dot = BIG_DOT if n == 0 else MEDIUM_DOT if n == 1 else str(10_000_000 + n)
        client_rows.append(
            (
                first_client + n,
                agency.id,
                f"Bench Carrier {n:05d}",
                dot,
                True,
                "",
                texas.id,
                "",
                "",
                "",
                "",
                "",
                False,
                now,
                now,
                cargo_class,
            )
        )
        client_agency.append(agency.id)
    _copy(
        Client,
        [
            "id",
            "agency",
            "client_name",
            "dot",
            "acord_enabled",
            "address",
            "state",
            "zip_code",
            "mailing_address",
            "mailing_zip_code",
            "phone",
            "email",
            "deleted",
            "created_at",
            "updated_at",
            "cargo_class",
        ],
        client_rows,
    )
    client_ids = [row[0] for row in client_rows]

    # Policies: auto liability in force and physical damage (in force for even clients).
    first_policy = _next_id(Policy)
    policy_rows, al_policy = [], {}
    for n, client_id in enumerate(client_ids):
        al_id, apd_id = first_policy + 2 * n, first_policy + 2 * n + 1
        al_policy[client_id] = al_id
        apd_start = year_start if n % 2 == 0 else year_start.replace(year=year_start.year - 1)
        for pid, ctype, start, number in (
            (al_id, al.id, year_start, f"BM-AL-{n:06d}"),
            (apd_id, apd.id, apd_start, f"BM-APD-{n:06d}"),
        ):
            policy_rows.append(
                (
                    pid,
                    client_id,
                    number,
                    ctype,
                    insurer.id,
                    texas.id,
                    start,
                    start.replace(year=start.year + 1),
                    False,
                    False,
                    "",
                    "",
                    False,
                    now,
                    now,
                    client_agency[n],
                )
            )
    _copy(
        Policy,
        [
            "id",
            "client",
            "policy_number",
            "coverage_type",
            "insurer",
            "state",
            "effective_date",
            "expiration_date",
            "additional_insured",
            "subrogation_waived",
            "covered_autos",
            "description",
            "deleted",
            "created_at",
            "updated_at",
            "agency",
        ],
        policy_rows,
    )
    first_limit = _next_id(PolicyLimit)
    _copy(
        PolicyLimit,
        ["id", "policy", "name", "amount", "position"],
        (
            (first_limit + i, row[0], "Combined Single Limit", Decimal("1000000"), 0)
            for i, row in enumerate(policy_rows)
        ),
    )
    first_rate = _next_id(PolicyRate)
    _copy(
        PolicyRate,
        ["id", "policy", "unit_type", "annual_rate", "rate_per_100_value", "minimum_premium"],
        (
            (first_rate + i, pid, unit_type, rate, Decimal("0"), Decimal("0"))
            for i, (pid, unit_type, rate) in enumerate(
                (p, t, r)
                for p in al_policy.values()
                for t, r in ((tractor.id, Decimal("6000")), (trailer.id, Decimal("800")))
            )
        ),
    )

    # Vehicles: the big fleet, the medium fleet, then the rest spread over the other clients.
    # The third client holds exactly SMALL_FLEET units: the certificate's yardstick.
    owners = [client_ids[0]] * big_fleet + [client_ids[1]] * medium_fleet
    owners += [client_ids[2]] * SMALL_FLEET
    others = client_ids[3:]
    owners += [others[i % len(others)] for i in range(vehicles - SMALL_FLEET)]
    first_vehicle = _next_id(Vehicle)
    agency_of = dict(zip(client_ids, client_agency, strict=True))
    vehicle_rows = []
    for i, client_id in enumerate(owners):
        vid = first_vehicle + i
        unit_type = trailer.id if i % 3 == 2 else tractor.id
        vehicle_rows.append(
            (
                vid,
                client_id,
                f"U{i:07d}",
                unit_type,
                2015 + i % 10,
                *makes[i % len(makes)],
                _vin(vid),
                f"B{vid:07d}",
                f"B{vid:07d}",
                texas.id,
                "",
                "",
                Decimal(40000 + (i % 100) * 1000),
                "ACTIVE",
                False,
                now,
                now,
                agency_of[client_id],
            )
        )
    _copy(
        Vehicle,
        [
            "id",
            "client",
            "unit",
            "unit_type",
            "model_year",
            "make",
            "make_name",
            "serial_number",
            "license_plate",
            "license_plate_key",
            "license_plate_state",
            "owner",
            "garaging_address",
            "stated_value",
            "status",
            "deleted",
            "created_at",
            "updated_at",
            "agency",
        ],
        vehicle_rows,
    )

    first_coverage = _next_id(VehicleCoverage)
    removed_on = on - dt.timedelta(days=30)
    _copy(
        VehicleCoverage,
        [
            "id",
            "vehicle",
            "policy",
            "coverage_status",
            "policy_added_date",
            "policy_removed_date",
            "created_at",
            "updated_at",
        ],
        (
            (
                first_coverage + i,
                row[0],
                al_policy[row[1]],
                1 if i % 20 == 19 else 4,
                year_start,
                removed_on if i % 20 == 19 and removed_on > year_start else None,
                now,
                now,
            )
            for i, row in enumerate(vehicle_rows)
        ),
    )

    first_driver = _next_id(Driver)
    _copy(
        Driver,
        [
            "id",
            "client",
            "first_name",
            "last_name",
            "driver_type",
            "license_number",
            "address",
            "zip_code",
            "phone",
            "email",
            "status",
            "created_at",
            "updated_at",
            "agency",
        ],
        (
            (
                first_driver + i,
                client_ids[i % len(client_ids)],
                f"Driver{i}",
                f"Bench{i:06d}",
                driver_type,
                f"DL{i:08d}",
                "",
                "",
                "",
                "",
                "ACTIVE",
                now,
                now,
                agency_of[client_ids[i % len(client_ids)]],
            )
            for i in range(drivers)
        ),
    )

    _reset_sequences(Client, Policy, PolicyLimit, PolicyRate, Vehicle, VehicleCoverage, Driver)
    counts = {
        "clients": len(client_rows),
        "policies": len(policy_rows),
        "vehicles": len(vehicle_rows),
        "coverages": len(vehicle_rows),
        "drivers": drivers,
    }
    out(f"bench data: {counts} in {time.monotonic() - started:.1f} s")
    return counts
