"""The service's calendar: what "today" means for every date rule, and how a date is written."""

from __future__ import annotations

import datetime as dt
import re

from django.utils import timezone


def today() -> dt.date:
    """Today in the service's time zone (TIME_ZONE)."""
    return timezone.localdate()


def shifted(day: dt.date, delta: dt.timedelta) -> dt.date:
    """`day + delta`, held within the dates there are (0001-01-01 to 9999-12-31): a horizon
    reaching past the last date stops at it (an expiration notice on 9999-12-30), one before
    the first at the first, where the addition raised OverflowError (a 500)."""
    try:
        return day + delta
    except OverflowError:
        return dt.date.max if delta > dt.timedelta(0) else dt.date.min


# A date is written with its year in four digits, whatever the year: never strftime's %Y, which
# leaves a year before 1000 short on glibc ("1-01-01"), a date no input reads back.


def iso_text(day: dt.date) -> str:
    """2026-03-01 (0001-01-01 for the first day of year 1)."""
    return day.isoformat()


def us_text(day: dt.date, sep: str = "-") -> str:
    """03-01-2026, or 03/01/2026 with `sep` "/"."""
    return f"{day.month:02d}{sep}{day.day:02d}{sep}{day.year:04d}"


# What a date input that is not one is told, wherever it is sent (a query's `asOf`, a body's
# dates): the formats it takes, as the contract writes them.
DATE_FORMS = "YYYY-MM-DD or MM-dd-yyyy"
DATE_MESSAGE = f"Expected a date as {DATE_FORMS}."

# A date is read as the contract writes it (section 6), YYYY-MM-DD or MM-dd-yyyy, in exactly
# those digits: ASCII (strptime reads any script's digits, a fullwidth 2) and zero-padded
# (strptime reads 2026-3-1 as 2026-03-01).
_DATE_SHAPES = {
    "%Y-%m-%d": re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
    "%m-%d-%Y": re.compile(r"[0-9]{2}-[0-9]{2}-[0-9]{4}"),
}


def date_from_text(text: str) -> dt.date | None:
    """The date `text` writes as YYYY-MM-DD or MM-dd-yyyy, exactly; None for anything else (a
    day that does not exist too)."""
    for fmt, shape in _DATE_SHAPES.items():
        if shape.fullmatch(text):
            try:
                return dt.datetime.strptime(text, fmt).date()
            except ValueError:
                return None
    return None
