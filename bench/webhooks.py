"""Change events and webhooks (issue 15), measured in one run on PostgreSQL.

    bench/pg.sh start /tmp/pg15 55300
    .venv/bin/python bench/webhooks.py --database-url postgres://postgres@127.0.0.1:55300/bench15

Builds the seed_bench dataset (20,000 carriers and their 40,000 policies, a smaller fleet) in
that database, starts a local receiver that verifies every signature with the standardwebhooks
library, and `manage.py worker` processes, then prints:

- commit-to-delivery latency p50/p95 with one worker (target: p95 < 1 s; contract: < 5 s);
- delivery throughput of one worker and of two (same backlog size), and the double deliveries
  (receipts beyond the first per webhook-id; 0 expected);
- the cost of scheduling a vehicle (assign, then remove) with one active subscription vs none
  (target <= 1.3x), interleaved rounds, median per operation;
- the daily calendar job over the whole dataset (target < 5 s) and its query count.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class Receiver:
    """Records the arrival time of each verified webhook-id (and every duplicate)."""

    def __init__(self):
        self.secret = None
        self.arrivals: dict[str, float] = {}
        self.receipts = 0
        self.rejected = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                from standardwebhooks import Webhook

                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                now = time.time()
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    Webhook(receiver.secret).verify(body, headers)
                    ok = True
                except Exception:
                    ok = False
                with receiver.lock:
                    receiver.receipts += 1
                    if ok:
                        receiver.arrivals.setdefault(headers["webhook-id"], now)
                    else:
                        receiver.rejected += 1
                self.send_response(204 if ok else 400)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, ids, timeout: float) -> bool:
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if all(i in self.arrivals for i in ids):
                    return True
            time.sleep(0.01)
        return False


def start_workers(n: int, threads: int) -> list[subprocess.Popen]:
    return [
        subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "worker",
                "--threads",
                str(threads),
                "--interval",
                "0.05",
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=open(f"/tmp/bench-webhooks-worker-{k}.log", "w"),
        )
        for k in range(n)
    ]


def wait_ready(count: int, since: float, timeout: float = 120) -> None:
    """Until `count` workers have beaten since `since` (a worker beats once its delivery
    loop runs): on a loaded machine Django's start-up alone can take several seconds, and a
    latency measured before that would be the start-up's."""
    import datetime as dt

    from apps.events.models import WorkerHeartbeat

    after = dt.datetime.fromtimestamp(since, dt.UTC)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if WorkerHeartbeat.objects.filter(beat_at__gte=after).count() >= count:
            time.sleep(0.5)
            return
        time.sleep(0.1)
    raise SystemExit(f"{count} worker(s) not ready after {timeout} s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads), from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu() -> float:
    """CPU seconds of the database server's processes (the postmaster's children), so the
    cost of a delivery in the database is counted too."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    with open(f"/proc/{backend}/stat") as f:
        postmaster = int(f.read().rsplit(")", 1)[1].split()[1])
    total = cpu_seconds(postmaster)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if ppid == postmaster:
                total += cpu_seconds(int(entry))
    return total


def stop_workers(workers) -> None:
    for w in workers:
        w.send_signal(signal.SIGTERM)
    for w in workers:
        try:
            w.wait(20)
        except subprocess.TimeoutExpired:
            w.kill()


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def build_dataset() -> None:
    """The shape of seed_bench's carriers (20,000 clients, 40,000 policies, expirations spread
    over the year, some starting later), written with bulk inserts; once per database."""
    import datetime as dt
    from decimal import Decimal

    from django.contrib.auth import get_user_model

    from apps.agencies.models import Agency, AgencyMembership
    from apps.clients.models import Client
    from apps.core.dates import today
    from apps.demo.access import groups_ensure
    from apps.masterdata.models import CoverageType, Insurer, Make, State, UnitType
    from apps.policies.models import Policy
    from apps.vehicles.models import Vehicle

    if Agency.objects.filter(name="Bench Large").exists():
        return
    manager, _ = groups_ensure()
    agency = Agency.objects.create(name="Bench Large")
    user = get_user_model().objects.create(username="bench-large")
    user.groups.add(manager)
    AgencyMembership.objects.create(user=user, agency=agency)
    state = State.objects.get(code="TX")
    clients = Client.objects.bulk_create(
        Client(agency=agency, client_name=f"Bench Carrier {n}", dot=str(3_000_000 + n), state=state)
        for n in range(20_000)
    )
    al = CoverageType.objects.get(code="AL")
    mtc = CoverageType.objects.get(code="MTC")
    insurer, _ = Insurer.objects.get_or_create(name="Bench Mutual", defaults={"naic": "99999"})
    day = today()
    policies = []
    for n, client in enumerate(clients):
        for k, line in enumerate((al, mtc)):
            start = day - dt.timedelta(days=(n * 7 + k * 180) % 400 - 30)
            policies.append(
                Policy(
                    client=client,
                    agency_id=agency.id,
                    policy_number=f"BW-{line.code}-{n:06d}",
                    coverage_type=line,
                    insurer=insurer,
                    effective_date=start,
                    expiration_date=start + dt.timedelta(days=365),
                )
            )
    Policy.objects.bulk_create(policies, batch_size=5000)
    tractor, make = UnitType.objects.get(name="Tractor"), Make.objects.get(name="Kenworth")
    Vehicle.objects.bulk_create(
        Vehicle(
            client=clients[10],
            unit=f"B{n}",
            unit_type=tractor,
            model_year=2021,
            make=make,
            serial_number=f"1XKYDP9X5BENCH{n:03d}",
            stated_value=Decimal("100000.00"),
        )
        for n in range(40)
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--latency-events", type=int, default=200)
    parser.add_argument("--backlog", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--write-rounds", type=int, default=8)
    parser.add_argument(
        "--delivery-only",
        action="store_true",
        help="Only latency and throughput (skip the calendar job and the write-path cost).",
    )
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ["WEBHOOK_ALLOW_PRIVATE_TARGETS"] = "1"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    call_command("migrate", verbosity=0)
    call_command("load_masterdata", verbosity=0)
    build_dataset()
    from django.contrib.auth import get_user_model

    from apps.agencies.models import Agency
    from apps.clients.models import Client
    from apps.clients.services import client_update
    from apps.core.dates import today
    from apps.coverages.calendar import calendar_events_emit
    from apps.coverages.services import VEHICLE, coverage_assign, coverage_update
    from apps.events.models import CalendarMark
    from apps.events.services import event_emit
    from apps.policies.models import Policy
    from apps.vehicles.models import Vehicle
    from apps.webhooks.models import Webhook, WebhookDelivery
    from apps.webhooks.services import webhook_create

    user = get_user_model().objects.get(username="bench-large")
    agency = Agency.objects.get(name="Bench Large")
    print(f"dataset: {Policy.objects.count():,} policies, {Client.objects.count():,} clients")
    Webhook.objects.all().delete()

    # --- the daily calendar job over the whole dataset ---------------------------------
    day = today()
    timings = []
    for offset in range(0 if args.delivery_only else 3):
        when = day + django.utils.timezone.timedelta(days=offset)
        with transaction.atomic():
            # Measured inside a transaction rolled back afterwards: forget an earlier run's.
            CalendarMark.objects.filter(day=when).delete()
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                emitted = calendar_events_emit(day=when)
                timings.append(time.perf_counter() - started)
            transaction.set_rollback(True)
        print(
            f"calendar job day+{offset}: {timings[-1]:.2f} s, {emitted} events, "
            f"{len(queries)} queries (target < 5 s)"
        )

    # --- cost of a vehicle scheduling with one subscription vs none ------------------------
    policy = (
        Policy.objects.filter(client__agency=agency, coverage_type__code="AL")
        .filter(effective_date__lte=day, expiration_date__gt=day)
        .order_by("id")
        .first()
    )
    units = list(Vehicle.objects.filter(client_id=policy.client_id).order_by("id"))
    if not units:
        model = Vehicle.objects.filter(serial_number__contains="BENCH").first()
        units = Vehicle.objects.bulk_create(
            Vehicle(
                client_id=policy.client_id,
                unit=f"S{n}",
                unit_type_id=model.unit_type_id,
                model_year=2021,
                make_id=model.make_id,
                serial_number=f"2XKYDP9X5BENCH{n:03d}",
                stated_value=model.stated_value,
            )
            for n in range(40)
        )

    def schedule_round() -> list[float]:
        spent = []
        for unit in units:
            started = time.perf_counter()
            with transaction.atomic():
                coverage_assign(
                    user=user,
                    subject=VEHICLE,
                    target_id=unit.pk,
                    policy_id=policy.pk,
                    policy_added_date=day,
                )
            with transaction.atomic():
                coverage_update(
                    user=user,
                    subject=VEHICLE,
                    target_id=unit.pk,
                    policy_id=policy.pk,
                    coverage_status=1,
                    policy_removed_date=day,
                )
            spent.append(time.perf_counter() - started)
        return spent

    # Today's calendar job runs now, before any subscription exists, so the worker started
    # below does not begin with its backlog (measured above) in front of the latency events.
    from apps.coverages.calendar import calendar_run

    calendar_run(day=day)
    receiver = Receiver()
    hook = webhook_create(user=user, agency_id=agency.id, url=receiver.url)
    receiver.secret = hook.secret
    none, one = [], []
    if not args.delivery_only:
        schedule_round()  # warm-up
        for _ in range(args.write_rounds):
            Webhook.objects.filter(pk=hook.pk).update(active=False)
            none += schedule_round()
            Webhook.objects.filter(pk=hook.pk).update(active=True)
            one += schedule_round()
        ratio = statistics.median(one) / statistics.median(none)
        print(
            f"vehicle scheduling (assign+remove): none {statistics.median(none) * 1000:.1f} ms, "
            f"one subscription {statistics.median(one) * 1000:.1f} ms, ratio {ratio:.2f}x "
            "(target <= 1.3x)"
        )
    # The deliveries those writes queued are not part of the next measurements.
    WebhookDelivery.objects.all().delete()
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.all().delete()

    # --- commit-to-delivery latency, one worker ---------------------------------------
    launched = time.time()
    workers = start_workers(1, args.threads)
    wait_ready(1, launched)
    client = Client.objects.filter(agency=agency).first()
    committed: dict[str, float] = {}
    for n in range(args.latency_events):
        with transaction.atomic():
            client_update(user=user, instance=client, phone=f"555{n:07d}")
            from apps.events.models import Event

            event = Event.objects.filter(type="client.updated").latest("id")
        committed[event.public_id] = time.time()
        time.sleep(0.02)
    ok = receiver.wait_for(committed, 60)
    latencies = [receiver.arrivals[i] - t for i, t in committed.items() if i in receiver.arrivals]
    print(
        f"commit-to-delivery, 1 worker: p50 {pct(latencies, 0.5) * 1000:.0f} ms, "
        f"p95 {pct(latencies, 0.95) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms "
        f"({len(latencies)}/{len(committed)} delivered{'' if ok else ', TIMED OUT'})"
    )
    stop_workers(workers)

    # --- throughput: one worker, then two, on the same size of backlog ----------------
    # The workers start idle; their CPU (and the database's) is sampled every 0.2 s and read
    # at the first and at the last arrival: CPU per delivery is what decides the rate on a
    # quiet machine, deliveries/s also depends on what else runs on the box.
    results = {}
    for count in (1, 2):
        before = receiver.receipts
        launched = time.time()
        workers = start_workers(count, args.threads)
        wait_ready(count, launched)
        load = os.getloadavg()[0]
        samples: list[tuple[float, float, float]] = []
        sampling = threading.Event()

        def sample(workers=workers, samples=samples, sampling=sampling) -> None:
            while not sampling.is_set():
                samples.append(
                    (time.time(), sum(cpu_seconds(w.pid) for w in workers), postgres_cpu())
                )
                time.sleep(0.2)

        sampler = threading.Thread(target=sample)
        sampler.start()
        with transaction.atomic():
            ids = [
                event_emit(
                    type="client.updated", agency_id=agency.id, client_id=client.pk, data={"n": n}
                ).public_id
                for n in range(args.backlog)
            ]
        started = time.time()
        ok = receiver.wait_for(ids, 300)
        time.sleep(0.3)
        sampling.set()
        sampler.join()
        first = min(receiver.arrivals[i] for i in ids if i in receiver.arrivals)
        last = max(receiver.arrivals[i] for i in ids if i in receiver.arrivals)

        def at(when: float, samples=samples) -> tuple[float, float]:
            """The CPU counters at the sample nearest before `when`."""
            best = samples[0]
            for sample_ in samples:
                if sample_[0] <= when:
                    best = sample_
            return best[1], best[2]

        (cpu0, pg0), (cpu1, pg1) = at(first), at(last + 0.2)
        in_window = sum(1 for i in ids if first <= receiver.arrivals.get(i, -1) <= last + 0.2)
        time.sleep(1)
        stop_workers(workers)
        got = sum(1 for i in ids if i in receiver.arrivals)
        duplicates = receiver.receipts - before - got
        results[count] = got / (last - first)
        print(
            f"throughput, {count} worker(s) x {args.threads} threads: "
            f"{results[count]:.0f} deliveries/s ({got}/{len(ids)} in {last - first:.1f} s, "
            f"{time.time() - started:.1f} s from commit), double deliveries: {duplicates}"
            f"{'' if ok else ', TIMED OUT'}; CPU per delivery: worker "
            f"{(cpu1 - cpu0) / max(in_window, 1) * 1000:.2f} ms, PostgreSQL "
            f"{(pg1 - pg0) / max(in_window, 1) * 1000:.2f} ms; load average {load:.1f} "
            f"on {os.cpu_count()} CPUs"
        )
    print(f"two workers / one: {results[2] / results[1]:.2f}x")
    print(f"signatures rejected by the receiver: {receiver.rejected}")


if __name__ == "__main__":
    main()
