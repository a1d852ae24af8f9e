"""The audit trail (django-simple-history): who changed what, and when, as API data."""

from __future__ import annotations

from apps.core.serializers import UtcDateTimeField

CHANGE_TYPES = {"+": "created", "~": "changed", "-": "deleted"}
SHOWN = 20


def audit_trail(records) -> list[dict]:
    """Newest first: each change with its author and the fields it changed.

    `records` are an object's prefetched historical records (any order); no query is made.
    """
    ordered = sorted(records, key=lambda r: (r.history_date, r.history_id))
    entries, previous = [], None
    for record in ordered:
        fields = []
        if previous is not None and record.history_type == "~":
            fields = sorted(change.field for change in record.diff_against(previous).changes)
        entries.append(
            {
                "at": UtcDateTimeField().to_representation(record.history_date),
                "by": record.history_user.username if record.history_user_id else None,
                "type": CHANGE_TYPES.get(record.history_type, record.history_type),
                "fields": fields,
            }
        )
        previous = record
    return entries[::-1][:SHOWN]
