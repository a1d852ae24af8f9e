"""The worker's heartbeat, read by /readyz."""

from __future__ import annotations

import datetime as dt

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
