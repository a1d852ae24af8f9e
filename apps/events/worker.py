"""The worker's heartbeat, read by /readyz."""

from __future__ import annotations

import datetime as dt

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
