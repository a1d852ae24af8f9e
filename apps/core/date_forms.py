"""A date typed on a back-office form, read as the API reads one."""

from __future__ import annotations

from django import forms

from apps.core.dates import DATE_MESSAGE, date_from_text


class DateFormField(forms.DateField):
    """A date on an admin form or inline: the API's forms first (`date_from_text`: YYYY-MM-DD
    or MM-dd-yyyy, contract section 6, which the fleet import takes too), then what Django's
    field read before (the locale's input formats: 12/01/2026, Dec 1 2026, and the date
    widget's own YYYY-MM-DD); anything else is refused with the API's message, which names the
    forms, where Django's said only "Enter a valid date." and refused 12-01-2026."""

    default_error_messages = {"invalid": DATE_MESSAGE}

    def to_python(self, value):
        if isinstance(value, str):
            day = date_from_text(value.strip())
            if day is not None:
                return day
        return super().to_python(value)
