"""Pruning of old events and calendar marks, run daily by `manage.py worker`."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.utils import timezone

from apps.events.models import CalendarMark, Event

RETENTION_DAYS = getattr(settings, "EVENT_RETENTION_DAYS", 35)


def events_prune(*, now: dt.datetime | None = None, days: int = RETENTION_DAYS) -> int:
    """Delete events older than the retention (at least 30 days, contract section 14) and
    calendar marks older than a year; how many events went. Their deliveries go with them."""
    days = max(days, 30)
    now = now or timezone.now()
    deleted, _ = Event.objects.filter(occurred_at__lt=now - dt.timedelta(days=days)).delete()
    CalendarMark.objects.filter(day__lt=(now - dt.timedelta(days=400)).date()).delete()
    return deleted
