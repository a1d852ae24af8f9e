"""The service's calendar: what "today" means for every date rule."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone


def today() -> dt.date:
    """Today in the service's time zone (TIME_ZONE)."""
    return timezone.localdate()
