"""Shared model machinery: audit fields and agency scoping."""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models, router
from django.db.models import Q
from django.utils import timezone


def agency_ids_for(user) -> list[int] | None:
    """The agency ids a user may act for; None means every agency (superusers).

    Cached on the user object, so one request asks the database once.
    """
    if user is None or not user.is_authenticated:
        return []
    if user.is_superuser:
        return None
    cached = getattr(user, "_agency_ids", None)
    if cached is None:
        # Through the reverse accessor apps.agencies declares on the user model (core
        # imports no domain app): one query, the same as reading AgencyMembership.
        cached = list(
            user.agency_memberships.order_by("agency_id").values_list("agency_id", flat=True)
        )
        user._agency_ids = cached
    return cached


def acts_for(user, agency_id: int | None) -> bool:
    """Whether `user` acts for the agency `agency_id` (`agency_ids_for`; a superuser acts for
    every agency, and only a superuser for an agency no longer known, None)."""
    ids = agency_ids_for(user)
    return ids is None or (agency_id is not None and agency_id in ids)


class AgencyScopedQuerySet(models.QuerySet):
    """The one place where agency isolation is decided.

    Every read of agency-owned data goes through ``for_user``; subclasses name the path
    from their model to its agency in ``agency_field``.
    """

    agency_field = "agency"
    # The agencies `for_agencies` kept (None: not scoped, or every agency), carried by every
    # queryset chained from this one: a page of several agencies' records is read one agency
    # at a time (apps.core.pagination.page_rows).
    agency_ids: tuple[int, ...] | None = None

    def _clone(self):
        clone = super()._clone()
        clone.agency_ids = self.agency_ids
        return clone

    def __or__(self, other):
        # `a | b` keeps a's clone: its agencies no longer bound the rows.
        combined = super().__or__(other)
        combined.agency_ids = None
        return combined

    def __xor__(self, other):
        combined = super().__xor__(other)
        combined.agency_ids = None
        return combined

    def for_user(self, user) -> AgencyScopedQuerySet:
        return self.for_agencies(agency_ids_for(user))

    def for_agencies(self, ids: list[int] | None) -> AgencyScopedQuerySet:
        """The records of these agencies (`agency_ids_for`: None is every agency); for a
        queryset prepared once per process (apps.core.prepared) that takes the ids as a value."""
        if ids is None:
            return self
        scoped = self.filter(**{f"{self.agency_field}__in": ids})
        if self.agency_ids is None:  # a second scope only narrows the first: keep the first
            scoped.agency_ids = tuple(ids) if isinstance(ids, list | tuple) else None
        return scoped


def live_q(*paths: str) -> Q:
    """The one definition of "live": not soft-deleted (``deleted`` is False).

    Each path names a record whose flag counts: ``""`` is the record itself, ``"client"`` its
    client, ``"vehicle__client"`` its vehicle's client. Without paths, the record itself. Use it
    wherever a lookup crosses a relation (``Count(..., filter=live_q("policies"))``) or a
    partial index needs the condition; on a queryset of the model itself, call ``live()``.
    """
    return Q(**{(f"{path}__deleted" if path else "deleted"): False for path in paths or ("",)})


def is_live(record, *owners: str) -> bool:
    """`live_q` for a loaded record: it and each owner a path names (``"client"``) not
    soft-deleted. A record without ``deleted`` (a driver) is live by itself; its client still
    counts."""
    for path in ("", *owners):
        target = record
        for name in filter(None, path.split("__")):
            target = getattr(target, name)
        if getattr(target, "deleted", False):
            return False
    return True


def referable(queryset: models.QuerySet) -> models.QuerySet:
    """The records of `queryset` a write may name (`apps.core.services.live_reference`): not
    soft-deleted, and of a live client where the model has one (a deleted client's policies,
    units and drivers are gone with it). The admin's form boxes offer these (a coverage
    period's policy and unit or driver, a driver link's unit, a policy's client)."""
    if isinstance(queryset, SoftDeleteQuerySet):
        queryset = queryset.live()
    return queryset.filter(live_q("client")) if of_a_client(queryset.model) else queryset


def of_a_client(model) -> bool:
    """Whether records of `model` belong to a client (a `client` field: a policy, a unit, a
    driver, a driver link), whose deletion or agency they follow."""
    try:
        model._meta.get_field("client")
    except FieldDoesNotExist:
        return False
    return True


class SoftDeleteQuerySet(AgencyScopedQuerySet):
    """Agency-scoped records that are soft-deleted (``deleted=True``) rather than removed."""

    def live(self, *owners: str) -> SoftDeleteQuerySet:
        """Only the records that are not soft-deleted; with owners (``"client"``), only those
        whose owners are not soft-deleted either (a unit of a deleted client is gone with it)."""
        return self.filter(live_q("", *owners))

    def not_live(self) -> SoftDeleteQuerySet:
        """The records `live()` leaves out (the admin's "Deleted only"); a queryset whose
        `live()` has its own rule overrides both."""
        return self.exclude(live_q())


class ClientAgencyQuerySet(AgencyScopedQuerySet):
    """Records that carry a copy of their client's agency (`ClientAgencyMixin`), scoped through
    it (`agency_field` is "agency"); the soft-deleted ones add `SoftDeleteQuerySet`.
    """

    def bulk_create(self, objs, *args, **kwargs):
        """bulk_create skips save(): copy each record's agency from its client here too."""
        objs = list(objs)
        missing = {obj.client_id for obj in objs if obj.agency_id is None}
        if missing:
            clients = self.model._meta.get_field("client").related_model._base_manager
            agencies = dict(clients.filter(pk__in=missing).values_list("pk", "agency_id"))
            for obj in objs:
                if obj.agency_id is None:
                    obj.agency_id = agencies.get(obj.client_id)
        return super().bulk_create(objs, *args, **kwargs)


class ClientAgencyMixin:
    """A record of a client that keeps a copy of the client's `agency` (a non-editable
    foreign key named `agency`, with a `client` foreign key): written by save() (whoever saves:
    the services, the admin, an import), by `ClientAgencyQuerySet.bulk_create`, and by
    `Client.save` when a client moves to another agency. The copy lets a constraint or an index
    start with the agency (a unique policy number per agency; the agency-wide vehicle and driver
    lists sorted by any column) where a path through the client cannot."""

    def _follow_client(self) -> bool:
        """Copy the client's agency; whether it changed."""
        if self.client_id is None:
            return False
        client_agency = (
            self.client.agency_id
            if "client" in self._state.fields_cache
            else type(self)
            ._meta.get_field("client")
            .related_model._base_manager.filter(pk=self.client_id)
            .values_list("agency_id", flat=True)
            .first()
        )
        if client_agency is None or client_agency == self.agency_id:
            return False
        self.agency_id = client_agency
        return True

    def clean_fields(self, exclude=None) -> None:
        self._follow_client()  # before full_clean() checks a per-agency uniqueness rule
        super().clean_fields(exclude=exclude)

    def save(self, *args, **kwargs) -> None:
        if self._follow_client():
            update_fields = kwargs.get("update_fields")
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, "agency"}
        super().save(*args, **kwargs)


class CopiedColumn:
    """A record's copy of a column of the row a foreign key points to (a driver's licence state
    code, a vehicle's make name): a sort column that an index (agency, copy, id) serves where the
    join to the row could not, so that page 1 of an agency-wide list sorted by it walks the index
    and stops after the page instead of sorting the agency (issue 18). The copy is written here,
    whoever writes the key: `follow` and `saved` around the record's save(), `fill` in its
    queryset's bulk_create and bulk_update, `updating` in its queryset's update() (through
    `CopiedColumnsMixin` and `CopiedColumnsQuerySet`), and `spread` when the source row changes.
    """

    def __init__(self, relation: str, column: str, copy: str):
        self.relation, self.column, self.copy = relation, column, copy
        self._stored = f"_stored_{relation}_id"

    def _names(self, model) -> tuple[str, str]:
        return self.relation, model._meta.get_field(self.relation).attname

    def _key_written(self, record: models.Model, save_kwargs: dict) -> bool:
        fields = save_kwargs.get("update_fields")
        return fields is None or any(name in fields for name in self._names(record))

    def follow(self, record: models.Model, save_kwargs: dict) -> None:
        """Before save(): the copy follows the row, when the save writes the key. The row is
        read only when the key changed since the record was loaded or the copy is not known
        yet, so saving a record loaded without the row costs no query for it."""
        if not self._key_written(record, save_kwargs):
            return  # update_fields without the key: neither the key nor its copy is written
        field = record._meta.get_field(self.relation)
        target_id = getattr(record, field.attname)
        stored_id = getattr(record, self._stored, None)
        loaded = self.copy in record.__dict__
        if not loaded and target_id == stored_id:
            return  # loaded without the copy (only(), defer()) and the key unchanged
        current = record.__dict__.get(self.copy)
        if target_id is None:
            value = record._meta.get_field(self.copy).get_default()
        elif target_id == stored_id and current and not field.is_cached(record):
            value = current
        else:
            value = getattr(getattr(record, self.relation), self.column)
        if not loaded or value != current:
            setattr(record, self.copy, value)
            update_fields = save_kwargs.get("update_fields")
            if update_fields is not None:
                save_kwargs["update_fields"] = {*update_fields, self.copy}

    def saved(self, record: models.Model, save_kwargs: dict) -> None:
        """After save(): the key as now stored, when the save wrote it."""
        if self._key_written(record, save_kwargs):
            self.remember(record)

    def remember(self, record: models.Model) -> None:
        """In from_db(): the key as stored, for `follow` to compare."""
        attname = record._meta.get_field(self.relation).attname
        setattr(record, self._stored, record.__dict__.get(attname))

    def fill(self, model: type[models.Model], objs: list) -> None:
        """bulk_create and bulk_update skip save(): the copies of many records, in one query."""
        field = model._meta.get_field(self.relation)
        ids = {getattr(obj, field.attname) for obj in objs} - {None}
        rows = field.related_model._base_manager.filter(pk__in=ids) if ids else None
        values = dict(rows.values_list("pk", self.column)) if rows is not None else {}
        default = model._meta.get_field(self.copy).get_default()
        for obj in objs:
            setattr(obj, self.copy, values.get(getattr(obj, field.attname), default))

    def bulk_fields(self, model: type[models.Model], objs: list, fields) -> list:
        """bulk_update's fields: with the copy, filled, when they name the key."""
        fields = list(fields)
        if any(name in fields for name in self._names(model)) and self.copy not in fields:
            self.fill(model, objs)
            fields.append(self.copy)
        return fields

    def updating(self, model: type[models.Model], changes: dict) -> dict:
        """update()'s changes: with the copy, when they set the key to a row (or its id)."""
        name, attname = self._names(model)
        key = name if name in changes else attname if attname in changes else None
        if key is None or self.copy in changes:
            return changes
        target = changes[key]
        related = model._meta.get_field(self.relation).related_model
        if target is None:
            value = model._meta.get_field(self.copy).get_default()
        elif isinstance(target, related):
            value = getattr(target, self.column)
        elif isinstance(target, models.F):  # another column of the record: the row it names
            rows = related._base_manager.filter(pk=models.OuterRef(target.name))
            value = models.Subquery(rows.values(self.column)[:1])
        elif hasattr(target, "resolve_expression"):
            raise TypeError(f"update() cannot follow {self.copy} for {target!r}: save the records.")
        else:
            value = related._base_manager.filter(pk=target).values_list(self.column).get()[0]
        return {**changes, self.copy: value}

    def spread(self, model: type[models.Model], row: models.Model) -> int:
        """The row changed (a make renamed): every record pointing to it follows, in one
        statement that writes only the records whose copy differs. A copy is not the record's
        data: no history row, no new `updated_at`, no event of its own (the rename itself
        announces the records that show the row: apps.events.records, `shows`)."""
        field = model._meta.get_field(self.relation)
        value = getattr(row, self.column)
        return (
            model._base_manager.filter(**{field.attname: row.pk})
            .exclude(**{self.copy: value})
            .update(**{self.copy: value})
        )


class CopiedColumnsQuerySet(models.QuerySet):
    """bulk_create, bulk_update and update() keep the model's `copied_columns` with their keys
    (save() and from_db() do in `CopiedColumnsMixin`)."""

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        for copied in self.model.copied_columns:
            copied.fill(self.model, objs)
        return super().bulk_create(objs, *args, **kwargs)

    def bulk_update(self, objs, fields, *args, **kwargs):
        objs = list(objs)
        for copied in self.model.copied_columns:
            fields = copied.bulk_fields(self.model, objs, fields)
        return super().bulk_update(objs, fields, *args, **kwargs)

    def update(self, **kwargs):
        for copied in self.model.copied_columns:
            kwargs = copied.updating(self.model, kwargs)
        return super().update(**kwargs)


class CopiedColumnsMixin:
    """For a model that keeps copies of related rows' columns (`copied_columns`, each a
    `CopiedColumn`): whoever saves the record (the services, the admin, an import, a raw ORM
    write), each copy follows its key; with `CopiedColumnsQuerySet` for the bulk writes."""

    copied_columns: ClassVar[tuple[CopiedColumn, ...]] = ()

    def save(self, *args, **kwargs) -> None:
        for copied in self.copied_columns:
            copied.follow(self, kwargs)
        super().save(*args, **kwargs)
        for copied in self.copied_columns:
            copied.saved(self, kwargs)

    @classmethod
    def from_db(cls, db, field_names, values):
        # Each key as stored, so save() knows whether it changed (`CopiedColumn.follow`).
        obj = super().from_db(db, field_names, values)
        for copied in cls.copied_columns:
            copied.remember(obj)
        return obj


def user_stamp(**options) -> models.ForeignKey:
    """Who did something to a record (created, updated, uploaded it…): kept, as null, after the
    user is deleted, and never a reverse accessor on the user."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        **options,
    )


UNIQUE = "unique"


class _RecordValues(dict):
    """A record's field values by name, for the placeholders of a violation message."""

    def __init__(self, record: models.Model):
        super().__init__()
        self.record = record

    def __missing__(self, key: str):
        return getattr(self.record, key)


class SoftDeleteMixin:
    """For models with `deleted` and `deleted_at`: the rule "`deleted_at` follows `deleted`"
    (stamped when a record is soft-deleted, cleared when it is restored) is written here once."""

    def deletion_changes(self, deleted: bool) -> dict:
        """The field values a change of `deleted` to `deleted` sets; nothing when unchanged."""
        if bool(deleted) == self.deleted:
            return {}
        return {"deleted": bool(deleted), "deleted_at": timezone.now() if deleted else None}

    def mark_deleted(self, deleted: bool) -> None:
        """Apply `deletion_changes` to this instance (a record being built or deleted)."""
        for name, value in self.deletion_changes(deleted).items():
            setattr(self, name, value)


class ConstraintRulesMixin:
    """Uniqueness lives once, in the model's UniqueConstraints: `full_clean()` checks them and
    every broken one comes out with the code "unique" and its `violation_error_message`, whose
    placeholders name the record's fields ("A live client with DOT {dot} …"). The problem
    handler (apps/core/problems.py) answers such an error 409, and a race that only the database
    catches (IntegrityError) too.

    A constraint named in `constraint_fields` is the rule of one field's value (a policy's dates
    in order, a client's DOT unique in its agency): its broken message is that field's error, so
    the API and the admin's form name the field without a service repeating the check."""

    # {constraint name (as resolved, "policies_policy_…"): the field its error belongs to}
    constraint_fields: ClassVar[dict[str, str]] = {}

    def validate_constraints(self, exclude=None) -> None:
        using = router.db_for_write(type(self), instance=self)
        errors: dict = {}
        for model, constraints in self.get_constraints():
            for constraint in constraints:
                try:
                    constraint.validate(model, self, exclude=exclude, using=using)
                except ValidationError as broken:
                    error = broken
                    if isinstance(constraint, models.UniqueConstraint):
                        message = constraint.get_violation_error_message()
                        filled = message.format_map(_RecordValues(self))
                        error = ValidationError(filled, code=UNIQUE)
                    if constraint.name in self.constraint_fields:
                        error = ValidationError({self.constraint_fields[constraint.name]: error})
                    errors = error.update_error_dict(errors)
        if errors:
            raise ValidationError(errors)


def unique_violations(exc: ValidationError) -> list[str]:
    """The messages of the broken uniqueness rules in a `full_clean()` error."""
    found = exc.error_dict.values() if hasattr(exc, "error_dict") else [exc.error_list]
    return [e.message for errors in found for e in errors if e.code == UNIQUE]


class TimeStampedModel(ConstraintRulesMixin, models.Model):
    """Abstract base: who created and last changed a record, and when."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    created_by = user_stamp(editable=False)
    updated_by = user_stamp(editable=False)

    class Meta:
        abstract = True


class IdempotencyRecord(models.Model):
    """A request made with an Idempotency-Key, and its answer once there is one."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    response_headers = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "method", "path", "key"],
                name="%(app_label)s_%(class)s_unique_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.method} {self.path} [{self.key}]"
