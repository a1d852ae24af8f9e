"""The audit trail (django-simple-history): who changed what, and when, as API data."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from simple_history.models import HistoricalRecords

from apps.core.camel_case import camel
from apps.core.serializers import UtcDateTimeField

CHANGE_TYPES = {"+": "created", "~": "changed", "-": "deleted"}
SHOWN = 20
_NO_REQUEST = object()


@contextmanager
def history_user(user) -> Iterator[None]:
    """Record the changes saved inside as made by `user`, for writes made outside a request (a
    management command acting as a user, as `seed_demo` acts as "admin").

    The same hook as for a request: simple-history's HistoryRequestMiddleware puts the request
    in `HistoricalRecords.context`, whose user (the API's caller, the admin's staff member)
    each historical record names; here a stand-in carries `user`, the one the services are
    given and stamp as `created_by`/`updated_by`. Whatever was there before is put back.
    """
    context = HistoricalRecords.context
    previous = getattr(context, "request", _NO_REQUEST)
    context.request = SimpleNamespace(user=user)
    try:
        yield
    finally:
        if previous is _NO_REQUEST:
            del context.request
        else:
            context.request = previous


def api_field_names(serializer_class) -> dict[str, str]:
    """Model field name -> the camelCase name the API shows it under (the serializer's first
    field reading it, by name or by its column: `make` -> `makeId`, `client` -> `clientId`).
    Model fields the API does not show (denormalised copies, lookup keys) are not in it."""
    by_source: dict[str, str] = {}
    for name, field in serializer_class().fields.items():
        if field.source != "*" and "." not in field.source:
            by_source.setdefault(field.source, camel(name))
    model = serializer_class.Meta.model
    names = {}
    for field in model._meta.concrete_fields:
        shown = by_source.get(field.name) or by_source.get(field.attname)
        if shown:
            names[field.name] = shown
    return names


def audit_trail(records, names: dict[str, str]) -> list[dict]:
    """Newest first: each change with its author and the fields it changed, named as the API
    names them (`names`, from `api_field_names`; fields it does not show are left out).

    `records` are an object's prefetched historical records (any order); no query is made.
    """
    ordered = sorted(records, key=lambda r: (r.history_date, r.history_id))
    entries, previous = [], None
    for record in ordered:
        fields = []
        if previous is not None and record.history_type == "~":
            changed = record.diff_against(previous).changes
            fields = sorted({names[c.field] for c in changed if c.field in names})
        entries.append(
            {
                "at": UtcDateTimeField().to_representation(record.history_date),
                "by": record.history_user.username if record.history_user_id else None,
                "type": CHANGE_TYPES.get(record.history_type, record.history_type),
                "fields": fields,
            }
        )
        previous = record
    return entries[::-1]
