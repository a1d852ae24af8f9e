"""The identifiers of the trade, each validated one way everywhere (contract section 13).

A DOT number and a VIN have one definition each, here: the model field's validator, the
serializers, the query parameters, the list filters and the admin's fleet import all use it, so
what is stored, compared and verified is the same string. The messages differ by surface (a
field error, a query parameter naming the value sent) but the rule does not.

The model fields (`DotField`, `VinField`, `PlateField`) put a value in its stored form before
it is validated: `full_clean()` checks the validators and the uniqueness rules against what
will be stored, whoever wrote the value (a serializer has normalised it already; the admin's
form and a service called with what staff typed have not).
"""

from __future__ import annotations

import re
import unicodedata

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import RegexValidator
from django.db import models
from rest_framework.exceptions import ValidationError

# --- DOT: ASCII digits; leading zeros are dropped first, then 1 to 8 digits remain, not all zeros
# (0005550006 is 5550006, as 05550006 is: the length rule counts the number, not the padding).

DOT_MAX_DIGITS = 8
_ASCII_DIGITS = re.compile(r"[0-9]+")  # ASCII only: never str.isdigit()
DOT_MESSAGE = "A DOT number is 1 to 8 digits, not all zeros (leading zeros are not counted)."
# The stored form's check, the model field's: `DotField` has normalised the value before it and
# refused what is no DOT in DOT_MESSAGE's words, so this message is never shown (it stays as
# migrated: a new text would be a migration that changes nothing).
dot_validator = RegexValidator(
    rf"^[0-9]{{1,{DOT_MAX_DIGITS}}}$", "A DOT number is 1 to 8 digits.", code="invalid"
)


def dot_or_none(raw) -> str | None:
    """The USDOT number as stored (ASCII digits, leading zeros dropped: 01234567 and
    0001234567 are 1234567), or None when `raw` is none: not ASCII digits, all zeros, or more
    than 8 digits once the zeros are dropped. The one parser of a DOT; it never raises."""
    text = raw.strip() if isinstance(raw, str) else raw
    if not isinstance(text, str) or _ASCII_DIGITS.fullmatch(text) is None:
        return None
    value = text.lstrip("0")
    return value if 0 < len(value) <= DOT_MAX_DIGITS else None


def not_a_dot_message(raw) -> str:
    """What a query parameter that names no DOT is told: the value sent, then the rule."""
    return f"'{raw}' is not a DOT number. {DOT_MESSAGE}"


def normalize_dot(raw, *, field: str = "dot") -> str:
    """`dot_or_none` for a query parameter: what is no DOT is a 400 on `field` naming it."""
    value = dot_or_none(raw)
    if value is None:
        raise ValidationError({field: [not_a_dot_message(raw)]})
    return value


# DOT numbers already in their stored form, comma-separated: what a client almost always sends.
_STORED_DOTS = re.compile(
    rf"[1-9][0-9]{{0,{DOT_MAX_DIGITS - 1}}}(?:,[1-9][0-9]{{0,{DOT_MAX_DIGITS - 1}}})*"
)


EMPTY_DOT_MESSAGE = "Empty DOT number in {field} (a blank value, or nothing between two commas)."


def normalize_dots(values: list[str], *, field: str) -> list[str]:
    """The DOT numbers of `values`, each value one or several separated by commas, each
    normalised by `normalize_dot` (its 400 on `field`); a blank value or part (`dots=`,
    `1234567,`, `,,`) is a 400 on `field` too, never skipped: it was asked for and names no
    DOT. When all of them are in their stored form already (no blank, space or leading zero),
    one match of the whole text says so: 200 DOTs checked one by one cost a tenth of a
    millisecond more (issue 18)."""
    if not values:
        return []
    text = ",".join(values)
    if _STORED_DOTS.fullmatch(text):
        return text.split(",")
    parts = text.split(",")
    if not all(part.strip() for part in parts):
        raise ValidationError({field: [EMPTY_DOT_MESSAGE.format(field=field)]})
    return [normalize_dot(part, field=field) for part in parts]


# --- Identifiers people type (a policy number): no control characters (C0, DEL, C1), which no
# document prints and a search cannot be typed with ("A\nB").

CONTROL_MESSAGE = "Cannot contain control characters (a line break, a tab)."
printable_validator = RegexValidator(
    r"[\x00-\x1f\x7f-\x9f]", CONTROL_MESSAGE, code="control_character", inverse_match=True
)


# --- VIN: 17 characters of the VIN alphabet (no I, O or Q), compared in upper case.

VIN_RE = re.compile(r"^[A-HJ-NPR-Z0-9]{17}$")
VIN_MESSAGE = "A VIN is 17 characters of A-H, J-N, P, R-Z and 0-9."
vin_validator = RegexValidator(VIN_RE, VIN_MESSAGE, code="invalid_vin")


# --- Plate: compared by its ASCII letters and digits; separators (spaces, dashes, dots) ignored.

PLATE_MESSAGE = "A plate has a letter or a digit."
PLATE_ALPHABET_MESSAGE = (
    "A plate is written with the letters A-Z and the digits 0-9; separators are ignored."
)
_NOT_PLATE_CHARACTER = re.compile(r"[^A-Za-z0-9]")


def _foreign_letters(value: str) -> bool:
    """Whether `value` holds a letter, digit or accent outside ASCII (Unicode L, N, M)."""
    return not value.isascii() and any(
        not char.isascii() and unicodedata.category(char)[0] in "LNM" for char in value
    )


def plate_problem(value: str) -> str | None:
    """Why `value` names no plate, or None. A letter, digit or accent outside ASCII (Unicode
    categories L, N, M) is refused, never dropped: 'ЖЖ171745', 'Ⅻ171745' and 'é171745' would
    compare as plate 171745, and the long s (U+017F) upper-cases to 'S'. A plate with no
    letter or digit at all ('---') would name every unit without one."""
    if _foreign_letters(value):
        return PLATE_ALPHABET_MESSAGE
    if not plate_key(value):
        return PLATE_MESSAGE
    return None


def plate_validator(value: str) -> None:
    """A plate written (a vehicle's) is none at all, or one `plate_problem` accepts: `---`
    would be stored as no plate while showing one, and no lookup could find it."""
    if value.strip() and (problem := plate_problem(value)):
        raise DjangoValidationError(problem, code="invalid_plate")


def plate_key(value: str) -> str:
    """Plates compare by their ASCII letters and digits, without case ('abc-123' is 'ABC123');
    a plate whose key is empty names no plate. Taken from the raw text, then upper-cased, so
    no other character becomes one of them (the long s is not 'S'). Text with other letters or
    digits (`plate_problem` refuses it in every write and lookup) has no key: a plate stored
    before that rule ('ЖЖ-1711') is found by no plate, where its ASCII part ('1711') named it.
    """
    if _foreign_letters(value):
        return ""
    return _NOT_PLATE_CHARACTER.sub("", value).upper()


def ascii_upper(value: str) -> str:
    """An identifier as stored (a VIN, a plate, a licence number): trimmed, in upper case when
    it is ASCII. Text beyond ASCII is left as sent, for the identifier's check to refuse:
    upper-cased, the long s (U+017F) is 'S' and the ligature 'ﬀ' is 'FF' (16 characters
    that matched a 17-character VIN), and the check would never see them."""
    text = value.strip()
    return text.upper() if text.isascii() else text


def normalize_vin(value: str) -> str:
    """The VIN as stored (`ascii_upper`; not yet checked, see `is_vin`)."""
    return ascii_upper(value)


def is_vin(value: str) -> bool:
    """Whether a normalised value is a VIN."""
    return VIN_RE.match(value) is not None


def parse_vin(raw: str, *, field: str = "vin") -> str:
    """A VIN from a query or a batch, normalised; a 400 on `field` naming what was sent."""
    value = normalize_vin(raw)
    if not is_vin(value):
        raise ValidationError({field: [f"'{raw}' is not a VIN. {VIN_MESSAGE}"]})
    return value


class NormalizedCharField(models.CharField):
    """A text column whose value has one stored form (`normalize`), given before the value is
    validated: `full_clean()` (`clean_fields`, through `clean`) puts it on the record, so the
    validators and the uniqueness rules see the value as it will be stored. A value that has no
    stored form is left as it is, for the validators to refuse. Lookups and writes take their
    values as given (a prepared verification query puts each call's values into its SQL as they
    come; the model's save() stores the normal form)."""

    @staticmethod
    def normalize(value: str) -> str:
        return value

    def clean(self, value, model_instance):
        if isinstance(value, str) and value:
            value = self.normalize(value)
        return super().clean(value, model_instance)


class DotField(NormalizedCharField):
    """A USDOT number: 01234567 and 0001234567 are validated as 1234567 (and stored so,
    `Client.save`); what is no DOT (`dot_or_none`: not ASCII digits, more than 8 digits once
    the leading zeros are dropped, all zeros) is one error, said once."""

    def formfield(self, **kwargs):
        # The column's 8 characters bound the stored form, not what staff type: the admin's
        # form would refuse 0005550006 (and its input cut it) before the model normalised it.
        return super().formfield(**{**kwargs, "max_length": None})

    @staticmethod
    def normalize(value: str) -> str:
        return dot_or_none(value) or value

    def validate(self, value, model_instance):
        super().validate(value, model_instance)
        # Before the validators (a failing validate() skips them), so "12 34" is not told
        # twice, by the pattern and again by the zeros rule.
        if value and dot_or_none(value) is None:
            raise DjangoValidationError(DOT_MESSAGE, code="invalid")


class VinField(NormalizedCharField):
    """A VIN: trimmed and in upper case (`normalize_vin`) before it is checked, so the admin
    takes 1fujgldr7clbp8870 as the API and the fleet import do."""

    normalize = staticmethod(normalize_vin)


def normalize_plate(value: str) -> str:
    """A plate as stored (`ascii_upper`; compared through `plate_key`, checked by
    `plate_problem`)."""
    return ascii_upper(value)


class PlateField(NormalizedCharField):
    """A licence plate, trimmed and in upper case (`normalize_plate`)."""

    normalize = staticmethod(normalize_plate)
