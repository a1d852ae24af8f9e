"""Webhook durability drills (issue 15): nothing is lost when parts fail.

    bench/pg.sh start /tmp/pg15 55300
    .venv/bin/python reliability/webhooks_drill.py \
        --database-url postgres://postgres@127.0.0.1:55300/drill15 \
        [--pg-dir /tmp/pg15 --pg-port 55300]

Against a local receiver that verifies every signature with the standardwebhooks library:

1. SIGKILL the worker mid-delivery (the receiver holds the first request 5 s): the delivery
   stays pending; a new worker's sweep sends it again once the attempt's lease (60 s) ends.
2. Kill the receiver for 15 s while events are emitted: refused connections are retried
   (first retry within 15 s) and everything arrives once it is back.
3. With --pg-dir: stop PostgreSQL for 20 s under a running worker; the worker keeps beating
   (logging the failures) and delivers everything once the database is back.

Each drill checks that every event emitted reached the receiver at least once. Exits non-zero
on failure.
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
    def __init__(self, port: int = 0):
        self.secret = None
        self.seen: dict[str, int] = {}
        self.hold_first = 0.0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                from standardwebhooks import Webhook

                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                headers = {k.lower(): v for k, v in self.headers.items()}
                hold, receiver.hold_first = receiver.hold_first, 0.0
                time.sleep(hold)
                Webhook(receiver.secret).verify(body, headers)
                with receiver.lock:
                    receiver.seen[headers["webhook-id"]] = (
                        receiver.seen.get(headers["webhook-id"], 0) + 1
                    )
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def wait(self, ids, timeout) -> bool:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if all(i in self.seen for i in ids):
                return True
            time.sleep(0.2)
        return False


def worker() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--threads", "4"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--pg-dir")
    parser.add_argument("--pg-port")
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ["WEBHOOK_ALLOW_PRIVATE_TARGETS"] = "1"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from apps.agencies.models import Agency
    from apps.webhooks.models import Webhook
    from apps.webhooks.services import secret_new

    call_command("migrate", verbosity=0)
    agency, _ = Agency.objects.get_or_create(name="Drill Agency")
    receiver = Receiver()
    Webhook.objects.filter(agency=agency).delete()
    hook = Webhook.objects.create(agency=agency, url=receiver.url, secret=secret_new())
    receiver.secret = hook.secret
    failures = []

    # 1. SIGKILL mid-delivery.
    proc = worker()
    receiver.hold_first = 5.0
    ids = emit(agency.id, 1)
    time.sleep(2.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    started = time.time()
    proc = worker()
    ok = receiver.wait(ids, 120)
    print(
        f"SIGKILL mid-delivery: {'delivered' if ok else 'LOST'} "
        f"{time.time() - started:.0f} s after the restart; receipts {receiver.seen.get(ids[0], 0)}"
    )
    failures += [] if ok else ["sigkill"]

    # 2. The receiver goes away for 15 s.
    port = receiver.port
    receiver.stop()
    ids = emit(agency.id, 20)
    time.sleep(15)
    seen_before = receiver.seen
    receiver = Receiver(port)
    receiver.secret = hook.secret
    receiver.seen = seen_before
    started = time.time()
    ok = receiver.wait(ids, 120)
    print(
        f"receiver down 15 s: {sum(i in receiver.seen for i in ids)}/20 delivered "
        f"{time.time() - started:.0f} s after it came back"
    )
    failures += [] if ok else ["receiver"]

    # 3. PostgreSQL stopped for 20 s.
    if args.pg_dir:
        ids = emit(agency.id, 20)
        connection.close()
        subprocess.run(
            ["bash", "bench/pg.sh", "stop", args.pg_dir, args.pg_port], cwd=ROOT, check=True
        )
        time.sleep(20)
        subprocess.run(
            ["bash", "bench/pg.sh", "start", args.pg_dir, args.pg_port], cwd=ROOT, check=True
        )
        started = time.time()
        ok = receiver.wait(ids, 180)
        print(
            f"PostgreSQL down 20 s: {sum(i in receiver.seen for i in ids)}/20 delivered "
            f"{time.time() - started:.0f} s after it came back; worker alive: {proc.poll() is None}"
        )
        failures += [] if ok else ["postgres"]
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    print("FAILED: " + ", ".join(failures) if failures else "all webhook drills passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
