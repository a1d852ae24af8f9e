"""Reliability drills (issues 10 and 19): the production topology under load and faults.

    DATABASE_URL=postgres://… .venv/bin/python reliability/run.py [--seconds 60] [--clients 16]

Starts the topology of deploy/: nginx (deploy/nginx/insurance.conf) in front of two gunicorn
nodes and the background worker, sharing the PostgreSQL database of DATABASE_URL (migrated and
seeded), Redis (when redis-server is installed) and an S3-compatible store (moto's server).
Drives a mixed read and write load through nginx, then verifies that every write answered 2xx
is readable; slow clients (headers and bodies), a 500-DOT request line and oversized and
chunked uploads through nginx, watching /healthz; then kills workers during uploads and
assignment writes, stops PostgreSQL under load, and takes storage away, checking what each
leaves behind; then the webhook drills (reliability/webhooks_drill.py: SIGKILL of the worker
mid-delivery, receiver down, slow receiver, PostgreSQL stopped). Prints a report; exits
non-zero if any drill fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
sys.path.insert(0, str(ROOT))

from reliability import topology  # noqa: E402

FAILURES: list[str] = []


def log(message: str) -> None:
    print(message, flush=True)


def expect(condition: bool, message: str) -> None:
    log(("  ok    " if condition else "  FAIL  ") + message)
    if not condition:
        FAILURES.append(message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    def __init__(self, env: dict, workers: int = 2):
        self.port = free_port()
        self.env = env
        self.process = subprocess.Popen(
            [
                PY,
                "-m",
                "gunicorn",
                "-c",
                str(ROOT / "config/gunicorn.py"),
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(workers),
                "--threads",
                "4",
                "config.wsgi",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if request(self.port, "GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("gunicorn did not start")

    def workers(self) -> list[int]:
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(p) for p in path.read_text().split()] if path.exists() else []

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(20)


def request(port, method, path, body=None, headers=None, timeout=30, raw=None, ctype=None):
    """One call on a fresh connection: (status, body bytes, case-insensitive headers). A
    refused, cut or timed-out connection raises ConnectionError (an OSError), as the drills
    expect of a server that is starting or was killed."""
    all_headers = {"Connection": "close", **(headers or {})}
    if ctype:
        all_headers["Content-Type"] = ctype
    try:
        response = httpx.request(
            method,
            f"http://127.0.0.1:{port}{path}",
            json=body,
            content=raw,
            headers=all_headers,
            timeout=timeout,
        )
    except httpx.TransportError as exc:
        raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc
    return response.status_code, response.content, response.headers


def token(port) -> dict:
    status, data, _ = request(
        port,
        "POST",
        "/v1/auth/token",
        {"username": "demo-admin", "password": "demo-password"},
        {"apiKey": "demo-api-key"},
    )
    assert status == 200, data
    return {"apiKey": "demo-api-key", "Authorization": f"Bearer {json.loads(data)['access']}"}


def manage(env, *args) -> str:
    return subprocess.run(
        [PY, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout


def sql(env, query: str) -> list:
    code = (
        "import json; from django.db import connection\n"
        "with connection.cursor() as c:\n"
        f"    c.execute({query!r}); print(json.dumps(c.fetchall(), default=str))"
    )
    return json.loads(manage(env, "shell", "-c", code).strip().splitlines()[-1])


# --- drill 1: load with nothing lost -----------------------------------------------------------


def load_drill(ports: list[int], auth, seconds: float, clients: int) -> dict:
    statuses: Counter = Counter()
    created_clients, created_vehicles = [], []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    reads = [
        "/v1/coverages/clients?dot=1234567",
        "/v1/clients?limit=50",
        "/v1/vehicles?limit=50",
        "/v1/coverages/vehicles?vin=1FUJGLDR7CLBP8834",
        "/v1/policies?status=active",
        "/v1/drivers?limit=20",
        "/v1/certificates/clients?dot=1234567",
    ]

    def worker(index):
        rng = random.Random(f"{uuid.uuid4()}-{index}")
        while time.monotonic() < stop:
            port = ports[rng.randrange(len(ports))]
            roll = rng.random()
            try:
                if roll < 0.7:
                    status, _, _ = request(port, "GET", rng.choice(reads), headers=auth)
                elif roll < 0.85:
                    name = f"Load {uuid.uuid4().hex[:12]}"
                    status, data, _ = request(
                        port, "POST", "/v1/clients", {"clientName": name, "agencyId": 1}, auth
                    )
                    if status == 201:
                        with lock:
                            created_clients.append((json.loads(data)["id"], name))
                else:
                    vin = "1LD" + "".join(
                        rng.choice("0123456789ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(14)
                    )
                    status, data, _ = request(
                        port,
                        "POST",
                        "/v1/vehicles",
                        {
                            "clientId": 1,
                            "unit": f"L{index}-{rng.randrange(10**6)}",
                            "unitType": "Trailer",
                            "modelYear": 2020,
                            "makes": "Utility",
                            "serialNumber": vin,
                        },
                        auth,
                    )
                    if status == 201:
                        with lock:
                            created_vehicles.append((json.loads(data)["id"], vin))
            except OSError:
                status = "connection error"
            with lock:
                statuses[status] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"statuses": statuses, "clients": created_clients, "vehicles": created_vehicles}


# --- drill 2: kill workers mid-write ----------------------------------------------------------


def small_upload(port, auth, file_name: str) -> tuple[int, bytes, dict]:
    """Upload a tiny PDF to client 1 in one go."""
    boundary = uuid.uuid4().hex
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="clientId"\r\n\r\n1'
        f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{file_name}"\r\n\r\n%PDF-1.4\r\n--{boundary}--\r\n'
    ).encode()
    return request(
        port,
        "POST",
        "/v1/documents/clients",
        headers=auth,
        raw=body,
        ctype=f"multipart/form-data; boundary={boundary}",
    )


def slow_upload(port, auth, client_id: int, size: int, kill) -> None:
    """Send a multipart upload slowly, and kill the server's workers half way through."""
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="clientId"\r\n\r\n{client_id}'
        f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="killed.bin"\r\nContent-Type: application/octet-stream\r\n\r\n'
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body():
        nonlocal kill
        yield head
        chunk = os.urandom(256 * 1024)
        sent = 0
        while sent < size:
            piece = chunk[: size - sent]
            yield piece
            sent += len(piece)
            if sent >= size // 2 and kill is not None:
                kill()
                kill = None
                time.sleep(0.2)
        yield tail

    headers = {
        **auth,
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Content-Length": str(len(head) + size + len(tail)),
    }
    # The connection dies with the worker: that is the point.
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(
            f"http://127.0.0.1:{port}/v1/documents/clients",
            content=body(),
            headers=headers,
            timeout=30,
        )


def nginx_drills(args, nginx, servers, auth: dict, env: dict) -> None:
    """Slow clients, a long request line and big uploads, through nginx, with /healthz watched
    through nginx and on each node directly."""
    ports = [nginx.port, *(server.port for server in servers)]
    for body in (False, True):
        kind = "bodies" if body else "headers"
        log(
            f"\n== slowloris ({kind}): {args.slow_connections} connections trickling through "
            f"nginx for {args.slow_seconds:.0f} s"
        )
        prober = topology.Prober(ports)
        created = []
        writer_stop = threading.Event()

        def writer(created=created, writer_stop=writer_stop):
            while not writer_stop.is_set():
                name = f"Slow {uuid.uuid4().hex[:12]}"
                status, data, _ = request(
                    nginx.port, "POST", "/v1/clients", {"clientName": name, "agencyId": 1}, auth
                )
                if status == 201:
                    created.append((json.loads(data)["id"], name))
                time.sleep(0.3)

        thread = threading.Thread(target=writer)
        thread.start()
        result = topology.slowloris(
            nginx.port, args.slow_connections, args.slow_seconds, body, auth
        )
        writer_stop.set()
        thread.join()
        prober.stop()
        log(f"  slow connections: {result}")
        log(
            f"  /healthz: {prober.count} probes, slowest {prober.worst:.3f} s, "
            f"failures {prober.failures[:3]}"
        )
        expect(
            not prober.failures and prober.worst < 1.0,
            f"/healthz never stalled (slowest {prober.worst:.3f} s of {prober.count})",
        )
        if body:
            # A body trickled faster than client_body_timeout (15 s between reads) is nginx's
            # to hold: all of them stay open there while no gunicorn thread waits for them.
            expect(
                result["still_open"] == args.slow_connections,
                f"nginx held all {args.slow_connections} trickling bodies itself",
            )
        else:
            expect(
                result["still_open"] == 0,
                f"nginx cut off every trickling header after client_header_timeout "
                f"({result['cut_off']} closed)",
            )
        lost = [
            cid
            for cid, name in created
            if json.loads(request(nginx.port, "GET", f"/v1/clients/{cid}", headers=auth)[1]).get(
                "clientName"
            )
            != name
        ]
        expect(
            created and not lost,
            f"writes during the drill: {len(created)} created, all read back ({len(lost)} lost)",
        )

    log("\n== request line and headers through nginx")
    # The demo carrier and 499 DOTs not on file: 200 with NOT_FOUND entries.
    dots = "&".join(["dots=1234567"] + [f"dots={1000000 + i}" for i in range(499)])
    path = f"/v1/coverages/clients?{dots}"
    status, data, headers = request(nginx.port, "GET", path, headers=auth)
    expect(
        status == 200 and headers.get("Content-Type", "").startswith("application/json"),
        f"500 dots= parameters ({len(path)} bytes of path) answer {status}",
    )
    status, data, headers = request(nginx.port, "GET", "/v1/clients?q=" + "x" * 20000, headers=auth)
    expect(
        status == 414 and topology.is_problem(headers) and topology.problem_status(data) == 414,
        f"a 20 KB request line is 414 problem+json from nginx ({status})",
    )
    status, data, headers = request(
        nginx.port, "GET", "/v1/clients", headers={**auth, "X-Big": "y" * 20000}
    )
    expect(
        status == 400 and topology.is_problem(headers),
        f"a 20 KB header is 400 problem+json from nginx ({status})",
    )

    log("\n== uploads through nginx (S3 storage)")
    started = time.monotonic()
    status, data, headers = topology.chunked_upload(nginx.port, auth, 26 * 1024 * 1024)
    expect(
        status == 413 and topology.is_problem(headers),
        f"a chunked 26 MiB upload is 413 problem+json ({status}, "
        f"{time.monotonic() - started:.1f} s)",
    )
    started = time.monotonic()
    status, data, headers = topology.sized_upload(nginx.port, auth, 26_214_400)
    expect(
        status == 201,
        f"a 25 MiB file (26,214,400 bytes) is stored ({status}, "
        f"{time.monotonic() - started:.1f} s)",
    )
    status, data, headers = topology.sized_upload(nginx.port, auth, 26_214_401)
    expect(
        status == 413 and topology.is_problem(headers),
        f"one byte more is 413 problem+json ({status})",
    )
    status, _, headers = request(nginx.port, "GET", "/healthz", headers={"X-Request-ID": "drill-1"})
    expect(
        status == 200 and headers.get("X-Request-ID") == "drill-1",
        "the request id passes through nginx and back",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument(
        "--pg-ctl",
        default=os.environ.get("RELIABILITY_PG_CTL", ""),
        help="'stop' and 'start' commands separated by ';;' (optional)",
    )
    parser.add_argument("--slow-connections", type=int, default=150)
    parser.add_argument("--slow-seconds", type=float, default=15)
    parser.add_argument(
        "--skip-webhooks", action="store_true", help="without the webhook drills (about 4 min)"
    )
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        log("DATABASE_URL must point at PostgreSQL")
        return 2
    media = tempfile.mkdtemp(prefix="reliability-media-")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "reliability-only-secret-key-0123456789abcdefghijklmnop",
        "SECURE_SSL_REDIRECT": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "MEDIA_ROOT": media,
        "THROTTLE_API_KEY_RATE": "10000000/minute",
        "THROTTLE_USER_RATE": "10000000/minute",
        "DATABASE_CONNECT_TIMEOUT": "2",
    }
    redis = topology.Redis() if shutil.which("redis-server") else None
    s3 = topology.S3()
    if redis:
        env["CACHE_URL"] = redis.url
    env.update(s3.env)
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "seed_demo", "--force")
    servers = [Server(env), Server(env)]
    nginx = topology.Nginx([server.port for server in servers])
    worker = topology.Worker(env)
    log(
        f"topology: nginx :{nginx.port} -> gunicorn :{servers[0].port} :{servers[1].port}, "
        f"worker, PostgreSQL, {'Redis' if redis else 'local-memory cache'}, S3 (moto)"
    )
    try:
        auth = token(nginx.port)
        before = sql(
            env,
            "SELECT (SELECT COUNT(*) FROM clients_client), (SELECT COUNT(*) FROM vehicles_vehicle)",
        )[0]

        log(f"\n== load: {args.clients} clients for {args.seconds:.0f} s through nginx")
        result = load_drill([nginx.port], auth, args.seconds, args.clients)
        total = sum(result["statuses"].values())
        log(f"  {total} requests: {dict(result['statuses'])}")
        server_errors = sum(
            n for s, n in result["statuses"].items() if not isinstance(s, int) or s >= 500
        )
        expect(server_errors == 0, f"no 5xx or dropped connection ({server_errors})")
        unreadable = [
            cid
            for cid, name in result["clients"]
            if json.loads(
                request(servers[1].port, "GET", f"/v1/clients/{cid}", headers=auth)[1]
            ).get("clientName")
            != name
        ]
        expect(not unreadable, f"all {len(result['clients'])} created clients readable as written")
        unreadable = [
            vid
            for vid, vin in result["vehicles"]
            if json.loads(
                request(servers[0].port, "GET", f"/v1/vehicles/{vid}", headers=auth)[1]
            ).get("vin")
            != vin
        ]
        expect(
            not unreadable, f"all {len(result['vehicles'])} created vehicles readable as written"
        )
        after = sql(
            env,
            "SELECT (SELECT COUNT(*) FROM clients_client), (SELECT COUNT(*) FROM vehicles_vehicle)",
        )[0]
        expect(
            after[0] - before[0] == len(result["clients"]),
            f"client rows grew by exactly the 2xx creates ({after[0] - before[0]})",
        )
        expect(
            after[1] - before[1] == len(result["vehicles"]),
            f"vehicle rows grew by exactly the 2xx creates ({after[1] - before[1]})",
        )

        nginx_drills(args, nginx, servers, auth, env)

        log("\n== SIGKILL during uploads")
        first_new = sql(env, "SELECT COALESCE(MAX(id), 0) + 1 FROM documents_document")[0][0]
        files_before = s3.keys()
        status, _, _ = small_upload(servers[0].port, auth, "control.pdf")
        expect(status == 201, "a control upload is stored")
        docs_before = sql(env, "SELECT COUNT(*) FROM documents_document")[0][0]
        for _ in range(3):
            target = servers[0]
            slow_upload(
                target.port,
                auth,
                1,
                8 * 1024 * 1024,
                kill=lambda t=target: [os.kill(pid, signal.SIGKILL) for pid in t.workers()],
            )
            time.sleep(1.5)  # the master starts new workers
        stored = s3.keys() - files_before
        rows = {
            r[0]
            for r in sql(
                env,
                "SELECT storage_name FROM documents_document "
                f"WHERE NOT deleted AND id >= {first_new}",
            )
        }
        docs_after = sql(env, "SELECT COUNT(*) FROM documents_document")[0][0]
        expect(docs_after == docs_before, "no document row from a killed upload")
        expect(
            stored == rows,
            f"files and rows match: {len(rows)} row(s), {len(stored - rows)} orphaned "
            f"file(s), {len(rows - stored)} row(s) without a file",
        )
        status, _, _ = request(servers[0].port, "GET", "/v1/clients?limit=1", headers=auth)
        expect(status == 200, "the server answers again after its workers were killed")

        log("\n== SIGKILL during assignment writes")
        vehicle_ids = [
            r[0]
            for r in sql(
                env,
                "SELECT id FROM vehicles_vehicle WHERE client_id=1 "
                "AND unit LIKE 'L%' ORDER BY id DESC LIMIT 30",
            )
        ]
        stop_killing = threading.Event()

        def killer():
            while not stop_killing.is_set():
                time.sleep(0.2)
                for pid in servers[1].workers():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)

        thread = threading.Thread(target=killer)
        thread.start()
        answered = Counter()
        for vid in vehicle_ids:
            try:
                status, _, _ = request(
                    servers[1].port,
                    "POST",
                    "/v1/vehicles/coverages",
                    {"vehicleId": vid, "policyId": 1, "policyAddedDate": time.strftime("%Y-%m-%d")},
                    auth,
                    timeout=3,
                )
                answered[status] += 1
            except OSError:
                answered["killed"] += 1
        stop_killing.set()
        thread.join()
        log(f"  assignment attempts: {dict(answered)}")
        orphans = sql(
            env,
            "SELECT COUNT(*) FROM coverages_vehiclecoverage c WHERE NOT EXISTS "
            "(SELECT 1 FROM coverages_coverageevent e "
            "WHERE e.vehicle_coverage_id = c.id)",
        )[0][0]
        expect(orphans == 0, "every assignment period has its event (no half-written write)")
        doubles = sql(
            env,
            "SELECT COUNT(*) FROM (SELECT vehicle_id, policy_id FROM "
            "coverages_vehiclecoverage WHERE policy_removed_date IS NULL "
            "GROUP BY vehicle_id, policy_id HAVING COUNT(*) > 1) d",
        )[0][0]
        expect(doubles == 0, "no unit scheduled twice on a policy")

        log("\n== storage unavailable")
        broken = Server(
            {
                **env,
                "DOCUMENTS_STORAGE": "filesystem",
                "MEDIA_ROOT": "/proc/version/not-a-directory",
            },
            workers=1,
        )
        try:
            started = time.monotonic()
            status, _data, headers = small_upload(broken.port, auth, "a.pdf")
            expect(
                status == 503 and "problem+json" in headers.get("Content-Type", ""),
                f"upload answers 503 problem+json ({status}, {time.monotonic() - started:.2f} s)",
            )
            status, _, _ = request(
                broken.port, "GET", "/v1/coverages/clients?dot=1234567", headers=auth
            )
            expect(status == 200, "verification still answers")
            status, _, _ = request(broken.port, "GET", "/readyz")
            expect(status == 503, "readiness reports the storage")
        finally:
            broken.stop()

        if args.pg_ctl:
            stop_cmd, start_cmd = args.pg_ctl.split(";;")
            log("\n== PostgreSQL stopped under load")
            subprocess.run(stop_cmd, shell=True, check=True)
            timings = []
            for _ in range(5):
                started = time.monotonic()
                status, _data, headers = request(
                    servers[0].port,
                    "GET",
                    "/v1/coverages/clients?dot=1234567",
                    headers=auth,
                    timeout=15,
                )
                timings.append(
                    (status, time.monotonic() - started, headers.get("Content-Type", ""))
                )
            log(f"  while down: {[(s, round(t, 2)) for s, t, _ in timings]}")
            expect(
                all(s == 503 and "problem+json" in c for s, _, c in timings),
                "requests fail with 503 problem+json",
            )
            expect(max(t for _, t, _ in timings) < 5, "and fail fast (< 5 s)")
            subprocess.run(start_cmd, shell=True, check=True)
            recovered = None
            for attempt in range(20):
                status, _, _ = request(
                    servers[0].port, "GET", "/v1/coverages/clients?dot=1234567", headers=auth
                )
                if status == 200:
                    recovered = attempt
                    break
                time.sleep(0.2)
            expect(recovered is not None, f"the service recovers (after {recovered} retries)")
        expect(worker.alive(), "the background worker ran throughout")
    finally:
        worker.stop()
        nginx.stop()
        for server in servers:
            server.stop()
        s3.stop()
        if redis:
            redis.stop()
    if not args.skip_webhooks:
        webhook_drills(args)
    log(f"\n{'all drills passed' if not FAILURES else str(len(FAILURES)) + ' drill(s) FAILED'}")
    return 1 if FAILURES else 0


def webhook_drills(args) -> None:
    """reliability/webhooks_drill.py (issue 15): SIGKILL of the worker mid-delivery, the
    receiver down, a slow receiver beside a fast one, PostgreSQL stopped 20 s; in a database of
    their own on the same server, once the topology (whose worker would also deliver, and
    refuses local receivers in production) is down."""
    import psycopg

    url = os.environ["DATABASE_URL"]
    base, _, _ = url.rpartition("/")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS webhook_drill")
        conn.execute("CREATE DATABASE webhook_drill")
    log("\n== webhook drills (reliability/webhooks_drill.py)")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    command = [PY, "reliability/webhooks_drill.py", "--database-url", f"{base}/webhook_drill"]
    if args.pg_ctl:
        command += ["--pg-ctl", args.pg_ctl]
    result = subprocess.run(command, cwd=ROOT, env=env, timeout=900)
    expect(result.returncode == 0, "webhook drills: nothing lost, the in-flight one re-sent")


if __name__ == "__main__":
    sys.exit(main())
