"""Change events and webhooks (issue 15), measured in one run on PostgreSQL.

    bench/pg.sh start /tmp/pg15 55300
    .venv/bin/python bench/webhooks.py --database-url postgres://postgres@127.0.0.1:55300/bench15

Builds the seed_bench dataset (20,000 carriers and their 40,000 policies, a smaller fleet) in
that database, starts a local receiver that verifies every signature with the standardwebhooks
library (the latency run), nginx answering 204 (the throughput runs: it costs almost no CPU,
where a Python receiver would take the cores the workers need; --receiver python to use the
verifying one), and `manage.py worker` processes, then prints:

- commit-to-delivery latency p50/p95 with one worker (target: p95 < 1 s; contract: < 5 s);
- delivery throughput of one worker and of two (same backlog size, from the commit to the last
  arrival), the double deliveries (receipts beyond the first per webhook-id; 0 expected), and
  the CPU per delivery of the workers, PostgreSQL and the receiver;
- the cost of scheduling a vehicle (assign, then remove) with one active subscription vs none
  (target <= 1.3x), interleaved rounds, median per operation;
- the daily calendar job over the whole dataset (target < 5 s) and its query count;
- then the issue's numbers in one block, with the load average. Exits non-zero on a double
  delivery, a rejected signature or deliveries that did not arrive.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
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


class NginxReceiver:
    """nginx answering 204 to every POST, logging the arrival time and webhook-id of each
    request: a receiver that costs almost no CPU, so the throughput measured is the workers'
    and not a Python receiver's competing for the same cores (the signatures are verified by
    the Python receiver of the latency measurement, same code path)."""

    def __init__(self, port: int = 0):
        import socket
        import tempfile

        if not port:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
        self.dir = Path(tempfile.mkdtemp(prefix="bench-webhooks-nginx-"))
        self.log_path = self.dir / "hooks.log"
        conf = self.dir / "nginx.conf"
        conf.write_text(
            f"""
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log warn;
worker_processes 1;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {self.dir}/body;
    proxy_temp_path {self.dir}/proxy;
    fastcgi_temp_path {self.dir}/fastcgi;
    uwsgi_temp_path {self.dir}/uwsgi;
    scgi_temp_path {self.dir}/scgi;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    log_format hooks '$msec $http_webhook_id';
    server {{
        listen 127.0.0.1:{port};
        location / {{
            access_log {self.log_path} hooks buffer=64k flush=100ms;
            return 204;
        }}
    }}
}}
"""
        )
        # One process (no master): its CPU is the receiver's.
        self.process = subprocess.Popen(
            ["nginx", "-c", conf, "-p", self.dir, "-g", "daemon off; master_process off;"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        atexit.register(self.stop)
        self.url = f"http://127.0.0.1:{port}/hook"
        self.arrivals: dict[str, float] = {}
        self.receipts = 0
        self._offset = 0
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit(f"nginx did not start on port {port}")

    def _read(self) -> None:
        if not self.log_path.exists():
            return
        with open(self.log_path) as log:
            log.seek(self._offset)
            data = log.read()
        end = data.rfind("\n") + 1
        self._offset += end
        for line in data[:end].splitlines():
            when, msg_id = line.split(" ", 1)
            self.receipts += 1
            self.arrivals.setdefault(msg_id, float(when))

    def wait_for(self, ids, timeout: float) -> bool:
        deadline = time.time() + timeout
        while time.time() < deadline:
            self._read()
            if all(i in self.arrivals for i in ids):
                return True
            time.sleep(0.05)
        self._read()
        return False

    def settle(self) -> None:
        """Read what the log buffer still held (flushed every 100 ms)."""
        time.sleep(0.3)
        self._read()

    def stop(self) -> None:
        import shutil

        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


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
    parser.add_argument("--backlog", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--write-rounds", type=int, default=8)
    parser.add_argument(
        "--delivery-only",
        action="store_true",
        help="Only latency and throughput (skip the calendar job and the write-path cost).",
    )
    parser.add_argument(
        "--receiver",
        choices=("nginx", "python"),
        default="nginx" if shutil.which("nginx") else "python",
        help="Receiver of the throughput runs (nginx answering 204 when installed).",
    )
    parser.add_argument("--nginx-port", type=int, default=0, help="0: a free port.")
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

    failures: list[str] = []

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
    if not ok:
        failures.append("commit-to-delivery: not everything arrived within 60 s")
    stop_workers(workers)

    # --- throughput: one worker, then two, on the same size of backlog ----------------
    # The workers start idle; their CPU (and the database's and the receiver's) is sampled
    # every 0.2 s and read at the first and at the last arrival: CPU per delivery is what
    # decides the rate on a quiet machine, deliveries/s also depends on what else runs on
    # the box. The receiver is nginx answering 204 (it costs almost nothing; a Python
    # receiver would take the CPU the workers need), unless --receiver python.
    if args.receiver == "nginx":
        sink = NginxReceiver(args.nginx_port)
        Webhook.objects.filter(pk=hook.pk).update(active=False)
        webhook_create(user=user, agency_id=agency.id, url=sink.url)
        sink_pid = sink.process.pid
    else:
        sink, sink_pid = receiver, None
    results, cpu, loads = {}, {}, {}
    for count in (1, 2):
        before = sink.receipts
        launched = time.time()
        workers = start_workers(count, args.threads)
        wait_ready(count, launched)
        loads[count] = os.getloadavg()
        samples: list[tuple[float, float, float, float]] = []
        sampling = threading.Event()

        def sample(workers=workers, samples=samples, sampling=sampling) -> None:
            while not sampling.is_set():
                samples.append(
                    (
                        time.time(),
                        sum(cpu_seconds(w.pid) for w in workers),
                        postgres_cpu(),
                        cpu_seconds(sink_pid) if sink_pid else 0.0,
                    )
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
        ok = sink.wait_for(ids, 300)
        time.sleep(0.3)
        sampling.set()
        sampler.join()
        first = min(sink.arrivals[i] for i in ids if i in sink.arrivals)
        last = max(sink.arrivals[i] for i in ids if i in sink.arrivals)

        def at(when: float, samples=samples) -> tuple[float, float, float]:
            """The CPU counters at the sample nearest before `when`."""
            best = samples[0]
            for sample_ in samples:
                if sample_[0] <= when:
                    best = sample_
            return best[1:]

        start_cpu, end_cpu = at(first), at(last + 0.2)
        in_window = sum(1 for i in ids if first <= sink.arrivals.get(i, -1) <= last + 0.2)
        time.sleep(1)
        stop_workers(workers)
        if args.receiver == "nginx":
            sink.settle()
        got = sum(1 for i in ids if i in sink.arrivals)
        duplicates = sink.receipts - before - got
        # The rate over the backlog's drain: from the commit to the last arrival (the
        # claim of the first batch included), and between the first and last arrivals.
        results[count] = got / (last - started)
        cpu[count] = [
            (b - a) / max(in_window, 1) * 1000 for a, b in zip(start_cpu, end_cpu, strict=True)
        ]
        print(
            f"throughput, {count} worker(s) x {args.threads} threads: "
            f"{results[count]:.0f} deliveries/s ({got}/{len(ids)}, the last "
            f"{last - started:.2f} s after the commit, the first after {first - started:.2f} s; "
            f"{got / (last - first):.0f}/s between them), double deliveries: {duplicates}"
            f"{'' if ok else ', TIMED OUT'}; CPU per delivery: worker {cpu[count][0]:.2f} ms, "
            f"PostgreSQL {cpu[count][1]:.2f} ms"
            + (f", receiver (nginx) {cpu[count][2]:.3f} ms" if sink_pid else "")
            + f"; load average {' '.join(f'{x:.1f}' for x in loads[count])} "
            f"on {os.cpu_count()} CPUs"
        )
        if not ok:
            failures.append(f"throughput with {count} worker(s): not everything arrived")
        if duplicates:
            failures.append(f"{duplicates} double deliveries with {count} worker(s)")
    if args.receiver == "nginx":
        sink.stop()
    print(f"signatures rejected by the receiver: {receiver.rejected}")

    # --- the numbers, in one place ---------------------------------------------
    print("\n== issue 15, measured in this run ==")
    print(
        f"one worker:   {results[1]:6.0f} deliveries/s (target >= 200), "
        f"worker CPU {cpu[1][0]:.2f} ms per delivery"
    )
    print(
        f"two workers:  {results[2]:6.0f} deliveries/s, {results[2] / results[1]:.2f}x one "
        f"(target about 2x), worker CPU {cpu[2][0]:.2f} ms per delivery "
        f"({cpu[2][0] / cpu[1][0]:.2f}x one's)"
    )
    print(
        f"commit-to-delivery (one worker): p50 {pct(latencies, 0.5) * 1000:.0f} ms, "
        f"p95 {pct(latencies, 0.95) * 1000:.0f} ms (target p95 < 1 s; contract < 5 s)"
    )
    if not args.delivery_only:
        print(f"write-path cost, one subscription vs none: {ratio:.2f}x (target <= 1.3x)")
        print(
            f"daily calendar job, {Policy.objects.count():,} policies: "
            f"{max(timings):.2f} s at most over {len(timings)} days (target < 5 s)"
        )
    print(
        f"load average at the start of the throughput runs: "
        f"{' '.join(f'{x:.1f}' for x in loads[1])} (one), "
        f"{' '.join(f'{x:.1f}' for x in loads[2])} (two), {os.cpu_count()} CPUs"
    )
    if receiver.rejected:
        failures.append(f"{receiver.rejected} signatures rejected")
    if failures:
        print("FAILED: " + "; ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
