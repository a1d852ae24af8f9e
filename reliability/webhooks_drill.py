"""Webhook durability drills (issue 15): nothing is lost when parts fail.

    bench/pg.sh start /tmp/pg15 55300
    .venv/bin/python reliability/webhooks_drill.py \
        --database-url postgres://postgres@127.0.0.1:55300/drill15 \
        [--pg-ctl "bash bench/pg.sh stop /tmp/pg15 55300;;bash bench/pg.sh start /tmp/pg15 55300"]

`make reliability` (reliability/run.py) runs them after its own drills, in a database of their
own. Against local receivers that verify every signature with the standardwebhooks library and
log every request on arrival:

1. SIGKILL the worker mid-delivery (the receiver holds requests 5 s, so deliveries are in
   flight), then start a new one: every event arrives at least once, and each delivery that
   was in flight at the kill arrives again after the restart (the receiver's log shows two
   arrivals; the delivery log two attempts), once the killed attempt's lease lapses
   (WEBHOOK_LEASE_SECONDS: 20 s here, the shortest the system checks allow; 60 by default).
2. Kill the receiver for 15 s while events are emitted: refused connections are retried
   (first retry within 15 s) and everything arrives once it is back.
3. A receiver answering after 10 s does not delay the others: another subscription's events
   arrive within the contract's 5 s while the slow one is still holding requests.
4. With --pg-ctl: stop PostgreSQL for 20 s under a running worker; the worker keeps beating
   (logging the failures) and delivers everything once the database is back.

Exits non-zero on failure.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class Receiver:
    """Logs (webhook-id, arrival time) of every verified request before holding it."""

    def __init__(self, port: int = 0, hold: float = 0.0):
        self.secret = None
        self.log: list[tuple[str, float]] = []
        self.hold = hold
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                from standardwebhooks import Webhook

                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    Webhook(receiver.secret).verify(body, headers)
                except Exception:
                    self.send_response(400)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                with receiver.lock:
                    receiver.log.append((headers["webhook-id"], time.time()))
                time.sleep(receiver.hold)
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def arrivals(self, msg_id: str) -> list[float]:
        with self.lock:
            return [t for i, t in self.log if i == msg_id]

    def seen(self) -> set[str]:
        with self.lock:
            return {i for i, _ in self.log}

    def wait(self, ids, timeout, after: float = 0.0) -> bool:
        """Every id arrived (after `after`, when given) within `timeout` seconds."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                got = {i for i, t in self.log if t >= after}
            if set(ids) <= got:
                return True
            time.sleep(0.1)
        return False


def worker() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--threads", "8", "--interval", "0.1"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=open("/tmp/webhooks-drill-worker.log", "a"),
    )


def emit(agency_id: int, n: int) -> list[str]:
    from django.db import transaction

    from apps.events.services import event_emit

    ids = []
    for k in range(n):
        with transaction.atomic():
            ids.append(
                event_emit(
                    type="client.updated", agency_id=agency_id, client_id=None, data={"k": k}
                ).public_id
            )
    return ids


def subscribe(agency, receiver: Receiver):
    from apps.webhooks.models import Webhook
    from apps.webhooks.services import secret_new

    hook = Webhook.objects.create(agency=agency, url=receiver.url, secret=secret_new())
    receiver.secret = hook.secret
    return hook


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--pg-ctl", default="", help="'stop' and 'start' commands, ';;' apart")
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ["WEBHOOK_ALLOW_PRIVATE_TARGETS"] = "1"
    os.environ.setdefault("WEBHOOK_LEASE_SECONDS", "20")  # the workers' lease: the SIGKILL wait
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from apps.agencies.models import Agency
    from apps.webhooks.models import Webhook, WebhookDelivery

    call_command("migrate", verbosity=0)
    agency, _ = Agency.objects.get_or_create(name="Drill Agency")
    Webhook.objects.filter(agency=agency).delete()
    receiver = Receiver()
    hook = subscribe(agency, receiver)
    failures: list[str] = []

    def check(ok: bool, name: str, message: str) -> None:
        print(("  ok    " if ok else "  FAIL  ") + message, flush=True)
        if not ok:
            failures.append(name)

    # 1. SIGKILL mid-delivery.
    print("== webhooks: SIGKILL the worker mid-delivery", flush=True)
    proc = worker()
    time.sleep(4)  # started and idle
    receiver.hold = 5.0
    ids = emit(agency.id, 10)
    deadline = time.time() + 30
    while not receiver.seen() & set(ids) and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = time.time()
    in_flight = sorted(receiver.seen() & set(ids))
    receiver.hold = 0.0
    proc = worker()
    ok = receiver.wait(ids, 150)
    resent = receiver.wait(in_flight, 1, after=killed_at) if in_flight else False
    attempts = dict(
        WebhookDelivery.objects.filter(
            webhook=hook, event_id__in=[int(i[4:]) for i in ids]
        ).values_list("event_id", "attempts")
    )
    check(
        ok,
        "sigkill",
        f"every event arrived: {len(receiver.seen() & set(ids))}/{len(ids)}, "
        f"{time.time() - killed_at:.0f} s after the kill",
    )
    check(
        bool(in_flight) and resent,
        "sigkill-resend",
        f"the {len(in_flight)} in flight at the kill arrived again after the restart "
        f"(arrivals each: {sorted({len(receiver.arrivals(i)) for i in in_flight})}; "
        f"attempts in the delivery log: {sorted({attempts.get(int(i[4:])) for i in in_flight})})",
    )

    # 2. The receiver goes away for 15 s.
    print("== webhooks: receiver down 15 s", flush=True)
    port, log = receiver.port, receiver.log
    receiver.stop()
    ids = emit(agency.id, 20)
    time.sleep(15)
    receiver = Receiver(port)
    receiver.secret, receiver.log = hook.secret, log
    back = time.time()
    ok = receiver.wait(ids, 120)
    check(
        ok,
        "receiver",
        f"{len(receiver.seen() & set(ids))}/20 delivered, "
        f"{time.time() - back:.0f} s after it came back",
    )

    # 3. A slow receiver (10 s) next to a fast one.
    print("== webhooks: a receiver answering in 10 s does not delay the others", flush=True)
    slow = Receiver(hold=10.0)
    slow_hook = subscribe(agency, slow)
    started = time.time()
    ids = emit(agency.id, 8)
    ok = receiver.wait(ids, 30)
    fast_last = max(max(receiver.arrivals(i), default=0) for i in ids) - started
    slow_done = sum(1 for i in ids if slow.arrivals(i) and slow.arrivals(i)[0] + 10 <= time.time())
    check(
        ok and fast_last < 5,
        "slow",
        f"the other subscription got all 8 within {fast_last:.1f} s (contract: 5 s) while the "
        f"slow one had answered {slow_done}/8",
    )
    slow_ok = slow.wait(ids, 90)
    check(slow_ok, "slow-all", f"the slow receiver got all 8 too ({time.time() - started:.0f} s)")
    time.sleep(10.5)  # its last answers
    Webhook.objects.filter(pk=slow_hook.pk).delete()
    slow.stop()

    # 4. PostgreSQL stopped for 20 s.
    if args.pg_ctl:
        print("== webhooks: PostgreSQL stopped 20 s", flush=True)
        stop_cmd, start_cmd = args.pg_ctl.split(";;")
        ids = emit(agency.id, 20)
        connection.close()
        subprocess.run(stop_cmd, shell=True, cwd=ROOT, check=True)
        time.sleep(20)
        subprocess.run(start_cmd, shell=True, cwd=ROOT, check=True)
        back = time.time()
        ok = receiver.wait(ids, 180)
        check(
            ok and proc.poll() is None,
            "postgres",
            f"{len(receiver.seen() & set(ids))}/20 delivered, {time.time() - back:.0f} s after "
            f"it came back; worker alive: {proc.poll() is None}",
        )
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
    receiver.stop()
    print(
        "webhook drills: " + ("FAILED: " + ", ".join(failures) if failures else "all passed"),
        flush=True,
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
