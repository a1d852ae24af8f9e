"""Money typed into a back-office form or a list's filter, judged as the API judges money."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from rest_framework import serializers

from apps.core.serializers import StrictMoneyField


class MoneyFormField(forms.DecimalField):
    """An amount on an admin form or inline (a stated value, a premium, a limit, a rate), or
    in a list's amount filter (`apps.core.filters.MoneyFilter`): the text runs through the
    API's money field (`StrictMoneyField`: plain ASCII decimal text, at most its digits, at
    most the column's places), so what the API refuses is refused with the API's message.
    Django's DecimalField read it as Python reads a number: `1e3`, `1_000` and full-width
    digits were stored as 1000 and 12, `NaN` and `1,234.50` refused in words of its own. A
    thousands separator is refused, as the API refuses it: a form shows amounts without one,
    and only a spreadsheet's cell is written with them.

    The column's own limits (its digits, not below zero) stay the model's, checked by the
    service's `full_clean()` with the same message the API's write gets."""

    def __init__(self, *, max_digits=None, decimal_places=None, **kwargs):
        super().__init__(max_digits=max_digits, decimal_places=decimal_places, **kwargs)
        places = {} if decimal_places is None else {"decimal_places": decimal_places}
        self.judge = StrictMoneyField(**places)

    def to_python(self, value):
        if value in self.empty_values:
            return None
        try:
            return self.judge.run_validation(str(value))
        except serializers.ValidationError as exc:
            # Each message keeps the API field's code (a list given to one ValidationError
            # would leave every message without one: an API filter's error then read `code`
            # null, which its schema does not allow).
            raise ValidationError(
                [
                    ValidationError(str(m), code=getattr(m, "code", None) or "invalid")
                    for m in exc.detail
                ]
            ) from exc
