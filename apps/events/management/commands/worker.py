"""`manage.py worker`: the one background process (contract section 14).

Runs the loops other apps register (the webhook delivery loop, apps/webhooks/relay.py: due
deliveries claimed in batches with SKIP LOCKED, sent from a pool of threads, so one slow
receiver, up to 10 s, holds one thread and not the others), the django-tasks database worker
loop for the "default" queue (and "webhooks", for tasks an earlier version queued), and in the
main thread: a heartbeat every few seconds (read by /readyz), the release of deliveries a
killed worker left held, and the daily calendar job at start-up and at the start of each
service day (TIME_ZONE), which also catches up the days on which no worker ran, followed by
the pruning of old events.
"""

from __future__ import annotations

import logging
import signal
import threading

from django.core.management.base import BaseCommand
from django.db import close_old_connections, connection
from django.utils.crypto import get_random_string
from django_tasks_db.management.commands.db_worker import Worker

from apps.core.dates import today
from apps.events.positions import strays_position
from apps.events.tasks import events_prune
from apps.events.worker import DAILY, HOUSEKEEPING, LOOPS, heartbeat

logger = logging.getLogger("apps.events.worker")


class Command(BaseCommand):
    help = "Run the background worker: tasks, webhook deliveries, daily calendar, heartbeat."

    def add_arguments(self, parser):
        parser.add_argument("--threads", type=int, default=8, help="Delivery threads (default 8).")
        parser.add_argument(
            "--task-threads", type=int, default=1, help="django-tasks threads (default 1)."
        )
        parser.add_argument("--interval", type=float, default=0.2, help="Idle poll seconds.")
        parser.add_argument("--beat", type=float, default=5.0, help="Heartbeat seconds.")
        parser.add_argument("--worker-id", default=None)
        parser.add_argument(
            "--once",
            action="store_true",
            help="One housekeeping pass (no task threads), then exit.",
        )

    def housekeeping(self, worker_id: str, calendar_day):
        """Beat, position stray events, sweep, and the calendar job when the service day
        changed; the day done."""
        heartbeat(worker_id=worker_id)
        strays_position()
        for job in HOUSEKEEPING:
            job()
        day = today()
        if day != calendar_day:
            emitted = sum(job(day=day) for job in DAILY)
            events_prune()
            logger.info("calendar %s: %d events", day, emitted)
        return day

    def handle(self, *, threads, task_threads, interval, beat, worker_id, once, **options):
        worker_id = worker_id or get_random_string(24)
        if once:
            self.housekeeping(worker_id, None)
            return
        stop = threading.Event()
        workers = [
            Worker(
                queue_names=["default", "webhooks"],
                interval=interval,
                batch=False,
                backend_name="default",
                startup_delay=False,
                max_tasks=None,
                worker_id=f"{worker_id}-{n}"[:64],
                excluded_queue_names=[],
            )
            for n in range(max(task_threads, 1))
        ]
        # The loops registered by the apps above events: the webhook relay (apps/webhooks).
        loops = [factory(threads=threads, interval=interval, stop=stop) for factory in LOOPS]

        def shutdown(signum, frame):
            stop.set()
            for w in workers:
                w.running = False

        signal.signal(signal.SIGINT, shutdown)
        signal.signal(signal.SIGTERM, shutdown)

        def run(w: Worker) -> None:
            # django-tasks' loop re-raises a lost database connection; a task thread must
            # outlive a database restart, so it reconnects and goes on until told to stop.
            while not stop.is_set():
                try:
                    w.run()
                except Exception:
                    logger.exception("task loop failed; restarting in 1 s")
                    stop.wait(1)
                finally:
                    connection.close()

        pool = [threading.Thread(target=run, args=(w,), daemon=True) for w in workers]
        pool += [threading.Thread(target=loop.run, daemon=True) for loop in loops]
        for thread in pool:
            thread.start()
        self.stdout.write(
            f"worker {worker_id}: {threads} delivery threads, {len(workers)} task threads"
        )
        calendar_day = None
        while not stop.is_set():
            close_old_connections()
            try:
                calendar_day = self.housekeeping(worker_id, calendar_day)
            except Exception:  # the database may be away for a while: keep beating
                logger.exception("worker housekeeping failed; retrying")
            stop.wait(beat)
        for thread in pool:
            thread.join(timeout=15)
