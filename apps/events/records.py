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


def records(kind: str, objs: list) -> list[dict[str, Any]]:
    """`record` of many records at once (a master-data change announced for each record that
    shows it), each to its own agency: the names of their who fields read in one query for
    all (`people_of_agencies`); the records come with the relations their serializer reads."""
    from apps.core.people import people_of_agencies

    by_agency: dict = {}
    for obj in objs:
        by_agency.setdefault(getattr(obj, "agency_id", None), []).append(obj)
    peoples = people_of_agencies(by_agency)
    shown: dict[int, dict[str, Any]] = {}
    for agency_id, agency_objs in by_agency.items():
        # One serializer per agency (its fields built once, not per record).
        many = SERIALIZERS[kind](agency_objs, many=True, context={"people": peoples[agency_id]})
        shown.update(
            {id(obj): dict(data) for obj, data in zip(agency_objs, many.data, strict=True)}
        )
    return [shown[id(obj)] for obj in objs]


def records_updated_emit(*, kind: str, objs: list) -> list:
    """`<kind>.updated` for each of `objs`, changed in bulk by one write (a row they show
    renamed, a producer or lienholder they named cleared): each as the API now shows it to its
    own agency (`records`), for its agency and client, in one insert with its
    fan-out (`events_emit_many`, as the calendar job's), whatever their number."""
    from apps.events.services import events_emit_many  # models: not while apps load (`ready`)

    return events_emit_many(
        [
            {
                "type": f"{kind}.updated",
                "agency_id": obj.agency_id,
                "client_id": obj.pk if kind == "client" else obj.client_id,
                "data": shown,
            }
            for obj, shown in zip(objs, records(kind, objs), strict=True)
        ]
    )


class RecordsAppConfig(AppConfig):
    """The AppConfig of an app whose records events show: `record_serializers` maps each kind
    to the dotted path of its serializer, registered once the app is ready (the serializers
    import models, which cannot load while the app registry is being populated).

    `shows` declares the rows of other models a kind of record shows (an insurer's name and
    NAIC in a policy): {kind: (path of the selector of the live records whose lookups name the
    rows, {"app.Model": (fields shown, (lookups naming the row, ...))})}. A change of those
    fields by `model_update` (apps.core.services.fields_changed: the services behind the API,
    the admin and the commands) announces `<kind>.updated` for each of these records, in the
    same transaction (`records_updated_emit`)."""

    record_serializers: dict[str, str] = {}
    shows: dict[str, tuple[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]]] = {}

    def ready(self):
        from apps.core.services import fields_changed

        for kind, path in self.record_serializers.items():
            record_serializer_register(kind, import_string(path))
        for kind, (selector, rows) in self.shows.items():
            for sender, (fields, lookups) in rows.items():
                fields_changed.connect(
                    _ShownRow(kind, selector, frozenset(fields), lookups),
                    sender=sender,
                    weak=False,
                    dispatch_uid=f"events-shown-{kind}-{sender}",
                )


class _ShownRow:
    """The receiver of a change of a row that records of `kind` show (`RecordsAppConfig.shows`):
    when a shown field changed, each live record naming the row is announced."""

    def __init__(self, kind: str, selector: str, fields: frozenset, lookups: tuple[str, ...]):
        self.kind, self.selector, self.fields, self.lookups = kind, selector, fields, lookups

    def __call__(self, sender, instance, fields, **kwargs):
        if not self.fields.intersection(fields):
            return  # nothing the records show (an insurer's address, its rating)
        from django.db.models import Q

        naming = Q()
        for lookup in self.lookups:
            naming |= Q(**{lookup: instance.pk})
        objs = list(import_string(self.selector)(naming))
        if objs:
            records_updated_emit(kind=self.kind, objs=objs)
