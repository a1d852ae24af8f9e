"""The audit trail (django-simple-history): who changed what, and when, as API data."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from django.db.models import BooleanField, Case, F, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce
from simple_history.models import HistoricalRecords
from simple_history.utils import get_history_model_for_model

from apps.core.camel_case import camel
from apps.core.models import agency_ids_for
from apps.core.people import People
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


def changed_fields(version) -> list[str]:
    """The names of the model fields an edit ("~") changed: the version diffed against the one
    recorded just before it (`previous`, set by `versions_with_previous`), whether or not that
    one is shown; none for a creation, a deletion or a first version."""
    if version.previous is None or version.history_type != "~":
        return []
    return [change.field for change in version.diff_against(version.previous).changes]


def audit_trail(versions, names: dict[str, str], people: People) -> list[dict]:
    """Each of `versions` (`versions_with_previous`'s, newest first) with its author and the
    fields it changed (`changed_fields`), named as the API names them (`names`, from
    `api_field_names`; fields it does not show are left out). The author is named as every
    who field is (`people`, the viewer's: apps.core.people), else null: the authors are read
    together, in one query at most."""
    versions = list(versions)
    people.expect(versions, ("history_user",))
    return [
        {
            "at": UtcDateTimeField().to_representation(version.history_date),
            "by": people.name(version, "history_user"),
            "type": CHANGE_TYPES.get(version.history_type, version.history_type),
            "fields": sorted({names[f] for f in changed_fields(version) if f in names}),
        }
        for version in versions
    ]


def versions_marked(versions: QuerySet, user) -> QuerySet:
    """Every version, each annotated `shown`: whether `user` may read it, i.e. it was recorded
    while the record was in one of the user's agencies (`agency_ids_for`, as `for_user` scopes
    the records). The one statement of the rule; `versions_for_user` filters on it in SQL.
    Each version also carries `previous_version_id`, the version of the same record recorded
    just before it, shown or not (`versions_with_previous`).

    A record that moved between agencies takes its past along, but that past is the old
    agency's: its edits, its staff, its producers. The agency it left no longer sees the record
    at all; the agency it joined sees it from the move on, as its change feed starts there
    (docs/webhooks.md: the old agency hears `to` NOT_FOUND, the new one `from` NOT_FOUND).
    """
    versions = versions.annotate(previous_version_id=_previous_version_id(versions.model))
    ids = agency_ids_for(user)
    if ids is None:
        return versions.annotate(shown=Value(True, output_field=BooleanField()))
    return versions.alias(recorded_in=version_agency(versions.model)).annotate(
        shown=Case(When(recorded_in__in=ids, then=Value(True)), default=Value(False))
    )


def versions_for_user(versions: QuerySet, user) -> QuerySet:
    """The versions (historical records) a user may read (`versions_marked`)."""
    return versions_marked(versions, user).filter(shown=True)


def versions_with_previous(page, versions: QuerySet) -> list:
    """The versions of `page` (read from `versions_for_user`), each with `previous`: the
    version of the same record recorded just before it, None for the first. Every view of a
    history diffs a version against it, shown or not (it carries `shown`): the fields an edit
    recorded in the viewer's agencies changed are theirs to know, as the first version they
    see (a move in) changed something. Those not on the page are read from `versions` (every
    version, marked: `versions_marked`) in one query, whatever the page's size."""
    page = list(page)
    on_page = {version.history_id: version for version in page}
    wanted = {version.previous_version_id for version in page} - on_page.keys() - {None}
    found = {v.history_id: v for v in versions.filter(history_id__in=wanted)} if wanted else {}
    for version in page:
        version.previous = on_page.get(version.previous_version_id) or found.get(
            version.previous_version_id
        )
    return page


def history_for_user(versions: QuerySet, user, *, newest: int | None = None) -> list:
    """The versions `user` may read (`versions_for_user`), newest first (the newest `newest`,
    else all), each with `previous` (`versions_with_previous`): one query, and one more when
    the version before one of them is not on the list (recorded in another agency)."""
    page = versions_for_user(versions, user).order_by("-history_date", "-history_id")[:newest]
    return versions_with_previous(page, versions_marked(versions, user))


def _previous_version_id(history_model):
    """The id of the version of the same record recorded just before each one."""
    pk = history_model.instance_type._meta.pk.attname
    date = OuterRef("history_date")
    earlier = (
        history_model._default_manager.filter(**{pk: OuterRef(pk)})
        .filter(
            Q(history_date__lt=date) | Q(history_date=date, history_id__lt=OuterRef("history_id"))
        )
        .order_by("-history_date", "-history_id")
        .values("history_id")[:1]
    )
    return Subquery(earlier)


def version_agency(history_model):
    """The agency a record belonged to when each of its versions was recorded.

    A version that carries an agency (a client's own; a policy's, unit's or driver's copy of
    its client's, which every save of theirs follows) says it. Another (a document, a
    scheduling period) belongs to a client: that client's agency at the version's time, read
    from the client's own versions (a client moves only through a save, which records one);
    a client recorded nowhere before it (bulk-loaded) has only its current agency to go by.
    """
    names = {field.name for field in history_model._meta.fields}
    if "agency" in names:
        return F("agency_id")
    if "client" in names:
        path = "client"
    else:  # through the first record on its way to the agency (a period's policy)
        owner = history_model.instance_type._default_manager.all().agency_field.split("__")[0]
        path = f"{owner}__client"
    client_model = history_model
    for name in path.split("__"):
        client_model = client_model._meta.get_field(name).related_model
    as_of = (
        get_history_model_for_model(client_model)
        ._default_manager.filter(
            **{
                client_model._meta.pk.attname: OuterRef(f"{path}_id"),
                "history_date__lte": OuterRef("history_date"),
            }
        )
        .order_by("-history_date", "-history_id")
        .values("agency_id")[:1]
    )
    agency = client_model._meta.get_field("agency")
    return Coalesce(Subquery(as_of), F(f"{path}__agency_id"), output_field=agency)
