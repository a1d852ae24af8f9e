"""The worker's heartbeat, read by /readyz."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from apps.events.models import WorkerHeartbeat


def heartbeat(*, worker_id: str) -> None:
    """Record that this worker is alive now."""
    WorkerHeartbeat.objects.update_or_create(
        worker_id=worker_id, defaults={"beat_at": timezone.now()}
    )


def last_heartbeat() -> dt.datetime | None:
    """The most recent heartbeat of any worker, or None if no worker ever ran."""
    return WorkerHeartbeat.objects.aggregate(last=Max("beat_at"))["last"]


def worker_check() -> str:
    """The worker's heartbeat for /readyz: "ok", "stale", "missing" or "unavailable"."""
    try:
        beat = last_heartbeat()
    except Exception:  # the heartbeat is read from the database
        return "unavailable"
    if beat is None:
        return "missing"
    age = timezone.now() - beat
    return "ok" if age <= dt.timedelta(seconds=settings.WORKER_HEARTBEAT_MAX_AGE) else "stale"


# The worker's periodic jobs of the apps above events, registered in their AppConfig.ready
# (events imports no app above it): each beat runs HOUSEKEEPING (the sweep of overdue webhook
# deliveries); at start-up and on each new service day it runs DAILY (the calendar job,
# `job(day=…)` answering how many events it emitted: the day's, and those of the days before
# on which no worker ran), then prunes old events.
HOUSEKEEPING: list[Callable[[], object]] = []
DAILY: list[Callable[..., int]] = []


def housekeeping_register(job: Callable[[], object]) -> None:
    """Run `job()` on every beat of the worker."""
    if job not in HOUSEKEEPING:
        HOUSEKEEPING.append(job)


def daily_register(job: Callable[..., int]) -> None:
    """Run `job(day=…)` once per service day, before the pruning of old events."""
    if job not in DAILY:
        DAILY.append(job)


# Long-running loops of the apps above events (the webhook relay), each built with the
# worker's `threads`, `interval` and `stop` event and run in a thread of its own until `stop`.
LOOPS: list[Callable[..., object]] = []


def loop_register(factory: Callable[..., object]) -> None:
    """Run `factory(threads=…, interval=…, stop=…).run()` in a thread of the worker."""
    if factory not in LOOPS:
        LOOPS.append(factory)
