"""The changed record as the API shows it, for an event's `data`.

events imports no domain app: each app registers the serializer of its records (its API
serializer) here from its `AppConfig.ready`, and its services ask for `record(kind, obj)`.
"""

from __future__ import annotations

from typing import Any

SERIALIZERS: dict[str, type] = {}


def record_serializer_register(kind: str, serializer_class: type) -> None:
    """Name the serializer that shows a kind of record in events ("client": ClientSerializer)."""
    SERIALIZERS[kind] = serializer_class


def record(kind: str, obj) -> dict[str, Any]:
    """`obj` as the API shows it, by the serializer its app registered for `kind`."""
    return dict(SERIALIZERS[kind](obj).data)
