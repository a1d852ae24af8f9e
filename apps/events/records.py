"""The changed record as the API shows it, for an event's `data`.

events imports no domain app: each app registers the serializer of its records (its API
serializer) here when it is ready (its AppConfig is a `RecordsAppConfig`), and its services ask
for `record(kind, obj)`.
"""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.utils.module_loading import import_string

SERIALIZERS: dict[str, type] = {}


def record_serializer_register(kind: str, serializer_class: type) -> None:
    """Name the serializer that shows a kind of record in events ("client": ClientSerializer)."""
    SERIALIZERS[kind] = serializer_class


def record(kind: str, obj, *, agency_id: int | None = None) -> dict[str, Any]:
    """`obj` as the API shows it, by the serializer its app registered for `kind`, to the
    agency it is in now (its `agency_id`, or `agency_id` for a record that holds none, a
    document), which the event carrying it is for: its who fields name only that agency's
    people (apps.core.people; a record that moved in keeps the stamps of the agency it left)."""
    from apps.core.people import people_of_agency  # models: not while apps load (`ready`)

    if agency_id is None:
        agency_id = getattr(obj, "agency_id", None)
    people = people_of_agency(agency_id)
    return dict(SERIALIZERS[kind](obj, context={"people": people}).data)


class RecordsAppConfig(AppConfig):
    """The AppConfig of an app whose records events show: `record_serializers` maps each kind
    to the dotted path of its serializer, registered once the app is ready (the serializers
    import models, which cannot load while the app registry is being populated)."""

    record_serializers: dict[str, str] = {}

    def ready(self):
        for kind, path in self.record_serializers.items():
            record_serializer_register(kind, import_string(path))
