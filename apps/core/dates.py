"""The service's calendar: what "today" means for every date rule, and how a date is written."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone


def today() -> dt.date:
    """Today in the service's time zone (TIME_ZONE)."""
    return timezone.localdate()


# A date is written with its year in four digits, whatever the year: never strftime's %Y, which
# leaves a year before 1000 short on glibc ("1-01-01"), a date no input reads back.


def iso_text(day: dt.date) -> str:
    """2026-03-01 (0001-01-01 for the first day of year 1)."""
    return day.isoformat()


def us_text(day: dt.date, sep: str = "-") -> str:
    """03-01-2026, or 03/01/2026 with `sep` "/"."""
    return f"{day.month:02d}{sep}{day.day:02d}{sep}{day.year:04d}"
