"""What a back-office change form was opened on, so that its save never undoes a change made
since (another tab's save, a soft delete from the list, a limit replaced, a PUT of the API).

Django builds a POSTed change form on the record as it is stored at the POST and saves every
field the form sends: a form kept open while the record changed wrote back what it had shown
(a policy deleted since came back to life, verification ACTIVE again, announced as restored),
and `changed_data` did not tell, the stored value differing from the one sent. So a change page
carries the version of the record it shows (`VERSION_FIELD`, a hidden field): a keyed digest of
the record's stored values and of the rows its service replaces with it (a policy's limits and
rates), with the time it was opened. A save whose version is no longer the stored one, or that
names none (a page opened before this check existed, a hand-made POST), is refused with
`stale_message` on the form, what the staff member typed kept; nothing is written.

A digest of the stored values rather than `updated_at`: agencies, producers, memberships,
master data and lienholders have no `updated_at`, and writes that change a record without
stamping it (a receiver's 410 deactivating a webhook) are seen too. The values are keyed
(`salted_hmac`) so the page tells nothing about fields it does not show (a webhook's secret).

A list edited in place (`list_editable`) writes only the fields it shows: each carries the value
it was shown with (Django's `show_hidden_initial`), and a row changed in the list is refused when
the stored value is no longer that one (`stale_row_refusal`).
"""

from __future__ import annotations

import datetime as dt
import json

from django import forms
from django.db.models import Model
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.dateformat import format as date_format

from apps.core.admin_people import who_label
from apps.core.params import is_ascii_int
from apps.core.people import people_for

VERSION_FIELD = "record_version"

_SALT = "apps.core.admin_versions"

NOT_SAVED = "your changes were not saved. Reload it to see the change, then make yours again."
NOT_SAVED_UNKNOWN = "your changes were not saved. Reload it, then make them again."


class VersionField(forms.CharField):
    """The hidden field that carries the version; not the record's data: never "changed" (the
    admin's change message and history name the record's fields only)."""

    widget = forms.HiddenInput

    def __init__(self, **kwargs):
        super().__init__(required=False, strip=True, **kwargs)

    def has_changed(self, initial, data) -> bool:
        return False


def _values(record: Model) -> list:
    # Every stored value of the record but the copies of other rows' columns (a unit's make
    # name follows the make: a make renamed is no change of the units).
    copies = {copied.copy for copied in getattr(type(record), "copied_columns", ())}
    return [
        getattr(record, field.attname)
        for field in record._meta.concrete_fields
        if field.name not in copies
    ]


def record_digest(record: Model, collections: dict[str, list[Model]]) -> str:
    """The version of `record` with the rows of its collections (`{name: rows}`: the rows a
    form's service replaces with the record, a policy's limits), as stored."""
    payload = json.dumps(
        [
            _values(record),
            {
                name: [_values(row) for row in sorted(rows, key=lambda row: row.pk)]
                for name, rows in collections.items()
            },
        ],
        default=str,  # a Decimal, a date, a time stamp to the microsecond
        sort_keys=True,
    )
    return salted_hmac(_SALT, payload, algorithm="sha256").hexdigest()


def version_token(record: Model, collections: dict[str, list[Model]]) -> str:
    """What a change page carries: when it was opened (ms since the epoch) and the version."""
    opened = int(timezone.now().timestamp() * 1000)
    return f"{opened}.{record_digest(record, collections)}"


def _opened(token: str) -> dt.datetime | None:
    opened, _, _ = token.partition(".")
    if not is_ascii_int(opened) or len(opened) > 15:
        return None
    return dt.datetime.fromtimestamp(int(opened) / 1000, tz=dt.UTC)


def stale_version_refusal(request, record: Model, token: str | None, stored: str) -> str | None:
    """Why a change form opened on version `token` may not save over the record as stored now
    (its version `stored`, read under the record's lock), or None when it may."""
    noun = record._meta.verbose_name
    _, _, digest = (token or "").partition(".")
    if not digest:
        return (
            f"This page does not say which version of the {noun} it shows (it was opened "
            f"before the back-office was updated): {NOT_SAVED_UNKNOWN}"
        )
    if constant_time_compare(digest, stored):
        return None
    return stale_message(request, record, opened=_opened(token))


def stale_message(request, record: Model, *, opened: dt.datetime | None = None) -> str:
    """Why a save over `record` was refused: it changed since the page was opened, at
    `opened`; who changed it and when, where the record's stamps (`updated_by`, `updated_at`)
    tell of a change made after that ("This policy was changed by ann at Mar 4, 2025,
    09:12:05 CST since you opened this page: …")."""
    when = getattr(record, "updated_at", None)
    by = ""
    if opened is not None and isinstance(when, dt.datetime) and when > opened:
        if getattr(record, "updated_by_id", None) is not None:
            by = f" by {who_label(people_for(request.user), record, 'updated_by', empty='')}"
        by += f" at {date_format(timezone.localtime(when), 'M j, Y, H:i:s T')}"
    noun = record._meta.verbose_name
    return f"This {noun} was changed{by} since you opened this page: {NOT_SAVED}"


def shows_initial_values(form: forms.ModelForm, names) -> None:
    """A list row's form: each of `names` carries the value it was shown with, so the save
    compares to that (`stale_row_refusal`), not to the value stored at the POST."""
    for name in names:
        if name in form.fields:
            form.fields[name].show_hidden_initial = True


def stale_row_refusal(request, form: forms.ModelForm, names) -> tuple[str, str] | None:
    """For a list row changed in place: `(field, message)` when a field the row shows was
    stored with another value than the list showed (or the row does not say which: a list
    opened before this check existed); None otherwise, and for a row not changed."""
    shown = [name for name in names if name in form.fields]
    if not shown or not form.has_changed():
        return None
    for name in shown:
        field = form.fields[name]
        sent = form.data.get(form.add_initial_prefix(name))
        if sent is None:
            noun = form.instance._meta.verbose_name
            return name, (
                f"This list does not say which version of the {noun} it shows (it was opened "
                f"before the back-office was updated): {NOT_SAVED_UNKNOWN}"
            )
        try:
            differs = field.has_changed(form.get_initial_for_field(field, name), sent)
        except forms.ValidationError:
            differs = True
        if differs:
            return name, stale_message(request, form.instance)
    return None
