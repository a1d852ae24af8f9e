"""What a requirement profile adds to verification (issue 16), as ratios measured in one run.

    .venv/bin/python bench/compliance.py [--rounds 30] [--database-url postgres://…]

Builds its own world in a throwaway database (a temporary SQLite file unless a database URL
is given, e.g. one from `bench/pg.sh start DIR PORT`): 500 carriers, each with auto
liability, cargo and general liability policies and their limits, and a 1,000-unit fleet
scheduled on its auto liability. Then it times, interleaved, through the whole Django stack
with real `apiKey` and bearer headers (no network, so the ratio is the strictest one):

- 500 DOTs without a profile, and with a five-rule profile (coverage AL 1M, coverage MTC
  100k, insurer rating A-, expiration notice 30 days, federal minimum);
- the same 1,000-unit batch without and with that profile.

Targets: at most 1.3x each. Prints the SQL query count of each call too (constant by design).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gc
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# CPU time of this process: with SQLite every query runs in-process too, and other processes
# on a shared machine (two cores, several engineers) then do not move the numbers; with a
# database server, wall time (--wall) counts the database's share.
CLOCK = time.process_time

RULES = [
    {"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000.00"},
    {"kind": "coverage", "coverageType": "MTC", "minimumLimit": "100000.00"},
    {"kind": "insurer_rating", "minimum": "A-"},
    {"kind": "expiration_notice", "days": 30},
    {"kind": "federal_minimum"},
]


def _setup(database_url: str | None) -> None:
    if database_url is None:
        database_url = f"sqlite:///{tempfile.mkdtemp(prefix='bench-compliance-')}/db.sqlite3"
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ.setdefault("THROTTLE_API_KEY_RATE", "10000000/minute")
    os.environ.setdefault("THROTTLE_USER_RATE", "10000000/minute")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from apps.masterdata.services import masterdata_load

    masterdata_load()


def _world() -> tuple[list[str], list[str]]:
    """500 carriers with three policies each, and one carrier's 1,000 scheduled units."""
    from django.db import transaction

    from apps.agencies.models import Agency, AgencyMembership
    from apps.clients.models import Client
    from apps.core.dates import today
    from apps.coverages.models import VehicleCoverage
    from apps.masterdata.models import CoverageType, Insurer, Make, UnitType
    from apps.policies.models import Policy, PolicyLimit
    from apps.vehicles.models import Vehicle

    on = today()
    with transaction.atomic():
        agency = Agency.objects.create(name="Bench Compliance")
        insurer, _ = Insurer.objects.get_or_create(
            name="Bench Mutual", defaults={"name_key": "bench mutual", "naic": "99999"}
        )
        insurer.am_best_rating = "A"
        insurer.save()
        types = {c.code: c for c in CoverageType.objects.filter(code__in=["AL", "MTC", "GL"])}
        clients = Client.objects.bulk_create(
            [
                Client(agency=agency, client_name=f"Carrier {n}", dot=str(6_000_000 + n))
                for n in range(500)
            ]
        )
        policies, limits = [], []
        for client in clients:
            for code, _amount, _name in (
                ("AL", "1000000", "Combined Single Limit"),
                ("MTC", "100000", "Cargo Limit"),
                ("GL", "1000000", "Each Occurrence"),
            ):
                policies.append(
                    Policy(
                        client=client,
                        coverage_type=types[code],
                        insurer=insurer,
                        policy_number=f"B-{code}-{client.dot}",
                        effective_date=on - dt.timedelta(days=100),
                        expiration_date=on + dt.timedelta(days=265),
                    )
                )
        policies = Policy.objects.bulk_create(policies)
        names = {"AL": "Combined Single Limit", "MTC": "Cargo Limit", "GL": "Each Occurrence"}
        for policy in policies:
            code = next(k for k, v in types.items() if v.pk == policy.coverage_type_id)
            amount = "100000" if code == "MTC" else "1000000"
            limits.append(PolicyLimit(policy=policy, name=names[code], amount=Decimal(amount)))
        PolicyLimit.objects.bulk_create(limits)
        fleet_owner = clients[0]
        fleet_al = next(
            p for p in policies if p.client_id == fleet_owner.pk and p.coverage_type.code == "AL"
        )
        tractor, make = UnitType.objects.get(name="Tractor"), Make.objects.get(name="Kenworth")
        units = Vehicle.objects.bulk_create(
            [
                Vehicle(
                    client=fleet_owner,
                    unit=f"U{n}",
                    unit_type=tractor,
                    model_year=2022,
                    make=make,
                    serial_number=f"1BNCH{n:012d}",
                    license_plate=f"BC{n:05d}",
                    license_plate_key=f"BC{n:05d}",
                    stated_value=Decimal("100000"),
                )
                for n in range(1000)
            ]
        )
        VehicleCoverage.objects.bulk_create(
            [
                VehicleCoverage(
                    vehicle=unit,
                    policy=fleet_al,
                    coverage_status=4,
                    policy_added_date=fleet_al.effective_date,
                )
                for unit in units
            ]
        )
        from django.contrib.auth import get_user_model

        from apps.accounts.services import api_key_create
        from apps.demo.access import groups_ensure

        manager, _ = groups_ensure()
        user = get_user_model().objects.create_user("bench", password="bench-password")
        user.groups.add(manager)
        AgencyMembership.objects.create(user=user, agency=agency)
        api_key_create(name="bench", raw_key="bench-compliance-key")
    return [c.dot for c in clients], [u.serial_number for u in units]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--wall", action="store_true", help="time with the wall clock")
    args = parser.parse_args()
    if args.wall:
        global CLOCK
        CLOCK = time.perf_counter
    _setup(args.database_url)
    dots, vins = _world()

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.accounts.tokens import RefreshToken

    user = get_user_model().objects.get(username="bench")
    headers = {
        "HTTP_APIKEY": "bench-compliance-key",
        "HTTP_AUTHORIZATION": f"Bearer {RefreshToken.for_user(user).access_token}",
    }
    http = Client()
    created = http.post(
        "/v1/requirement-profiles",
        {"name": "Five rules", "rules": RULES},
        content_type="application/json",
        **headers,
    )
    assert created.status_code == 201, created.content
    profile = created.json()["id"]
    query = "&".join(f"dots={d}" for d in dots)

    def get(url):
        def call():
            response = http.get(url, **headers)
            assert response.status_code == 200, response.content[:300]
            return response

        return call

    def post(body):
        def call():
            response = http.post(
                "/v1/coverages/vehicles/batch", body, content_type="application/json", **headers
            )
            assert response.status_code == 200, response.content[:300]
            return response

        return call

    cases = {
        "500 DOTs": get(f"/v1/coverages/clients?{query}"),
        "500 DOTs, 5-rule profile": get(f"/v1/coverages/clients?{query}&profile={profile}"),
        "1,000 units": post({"vins": vins}),
        "1,000 units, 5-rule profile": post({"vins": vins, "profile": profile}),
    }
    results = cases["500 DOTs, 5-rule profile"]().json()["results"]
    assert {r["compliance"]["result"] for r in results} == {"PASS"}, results[0]
    batch = cases["1,000 units, 5-rule profile"]().json()
    assert batch["summary"]["compliance"]["fail"] == 1000  # not scheduled on cargo

    # Two counts that do not depend on the machine's load: SQL queries and Python calls.
    queries, python_calls = {}, {}
    for name, call in cases.items():
        with CaptureQueriesContext(connection) as captured:
            call()
        queries[name] = len(captured.captured_queries)
        profiler = cProfile.Profile()
        profiler.runcall(call)
        python_calls[name] = pstats.Stats(profiler).total_calls
    for _ in range(3):
        for call in cases.values():
            call()
    # Paired: each round times a call without and with the profile back to back (in a random
    # order), so load from other processes on a shared machine hits both sides alike; the
    # ratio reported is the median of the per-round ratios.
    pairs = {
        "500 DOTs": ("500 DOTs", "500 DOTs, 5-rule profile"),
        "1,000 units": ("1,000 units", "1,000 units, 5-rule profile"),
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    ratios: dict[str, list[float]] = {name: [] for name in pairs}
    chance = random.Random(16)
    for _ in range(args.rounds):
        for pair, names in pairs.items():
            order = list(names)
            chance.shuffle(order)
            took = {}
            for name in order:
                # A collection of the previous call's garbage would be billed to this one.
                gc.collect()
                gc.disable()
                start = CLOCK()
                cases[name]()
                took[name] = CLOCK() - start
                gc.enable()
                samples[name].append(took[name])
            ratios[pair].append(took[names[1]] / took[names[0]])
    medians = {name: statistics.median(values) for name, values in samples.items()}

    clock = "wall" if args.wall else "CPU"
    print(f"{args.rounds} paired rounds, {connection.vendor}, in-process, {clock} time")
    print(f"{'call':32} {'median ms':>10} {'queries':>8} {'Python calls':>13}")
    for name, value in medians.items():
        print(f"{name:32} {value * 1000:10.1f} {queries[name]:8d} {python_calls[name]:13,d}")
    print()
    for pair, (without, with_profile) in pairs.items():
        paired = statistics.median(ratios[pair])
        fastest = min(samples[with_profile]) / min(samples[without])
        calls = python_calls[with_profile] / python_calls[without]
        print(
            f"{pair + ' with / without profile:':38} {paired:5.2f}  (target <= 1.30; "
            f"fastest vs fastest {fastest:4.2f}; Python calls {calls:4.2f})"
        )


if __name__ == "__main__":
    main()
