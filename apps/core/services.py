"""Write machinery shared by every app's services."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import connection, models
from django.db.models.deletion import ProtectedError, RestrictedError
from django.db.models.signals import ModelSignal
from django.http import Http404
from django.utils import timezone
from simple_history.utils import bulk_update_with_history

from apps.core.exceptions import Conflict
from apps.core.models import referable

M = TypeVar("M", bound=models.Model)

# Sent by `model_update` once it saved a record that changed: `sender` its model, `instance`
# the record, `fields` the names that changed. How an app above the one that owns a row (master
# data, an agency, a producer) follows a change of it in the same transaction, as post_save is
# for a new row: the records that show the row are announced (apps.events.records, `shows`).
fields_changed = ModelSignal(use_caching=True)


def model_update(
    *,
    instance: M,
    fields: Iterable[str],
    data: Mapping[str, Any],
    user=None,
    check: Callable[[M], None] | None = None,
) -> tuple[M, bool]:
    """Apply a partial update: the `fields` present in `data`, and only those, then
    `full_clean()` and `save()` when something changed (HackSoft's `model_update`).

    Every update service applies its plain fields through here, so "absent means unchanged"
    is written once. `user` becomes `updated_by` when something changed; `check` runs the
    service's rules that need the record as it will be (a free DOT, dates in order) after the
    fields are applied and before anything is written. `full_clean()` checks the model's
    constraints too, so a broken uniqueness rule comes out with its own message and the code
    "unique" (409, apps/core/models.py ConstraintRulesMixin). Returns the instance and whether it
    changed; an unchanged record is neither validated again nor saved.
    """
    model_fields = {field.name: field for field in instance._meta.get_fields()}
    changed: list[str] = []
    for name in fields:
        if name not in data:
            continue
        field = model_fields.get(name)
        if field is None or not field.concrete or field.many_to_many:
            raise TypeError(f"{name!r} is not a field {type(instance).__name__} can update.")
        value = data[name]
        if field.many_to_one:  # compare keys: reading the relation would cost a query
            same = getattr(instance, field.attname) == (value.pk if value is not None else None)
        else:
            same = getattr(instance, name) == value
        if not same:
            setattr(instance, name, value)
            changed.append(name)
    if not changed:
        return instance, False
    if check is not None:
        check(instance)
    if user is not None and "updated_by" in model_fields:
        instance.updated_by = user
    _validate_changed(instance, changed)
    # A whole save, not HackSoft's update_fields: several models derive columns in save()
    # (a policy's agency, a plate's search key, a normalized VIN) that must follow.
    instance.save()
    fields_changed.send(sender=type(instance), instance=instance, fields=tuple(changed))
    return instance, True


def fields_check(instance: models.Model, names: Iterable[str]) -> None:
    """Each named field's own checks (what `full_clean()` runs first), on an unsaved record,
    writing nothing: the errors of the fields that were given, when others could not be read
    (a staff import's row with a refused cell, which never reaches its create service)."""
    others = {field.name for field in instance._meta.concrete_fields} - set(names)
    instance.clean_fields(exclude=others)


def _validate_changed(instance: models.Model, changed: list[str]) -> None:
    """`full_clean()`, each field's own checks run on the fields the write changes only: a rule
    added after a record was stored (a plate's alphabet, a policy number's control characters)
    refuses a write that sends such a value, never one that changes something else (a legacy
    plate made the unit's sale a 400 on `licensePlate`, a field the caller never sent). The
    record's own rules (`clean()`), uniqueness and constraints are checked whole, as
    full_clean() does."""
    errors: dict = {}
    unchanged = {field.name for field in instance._meta.concrete_fields} - set(changed)
    for step in (lambda: instance.clean_fields(exclude=unchanged), instance.clean):
        try:
            step()
        except ValidationError as exc:
            errors = exc.update_error_dict(errors)
    refused = {name for name in errors if name != NON_FIELD_ERRORS}
    for step in (instance.validate_unique, instance.validate_constraints):
        try:
            step(exclude=refused)
        except ValidationError as exc:
            errors = exc.update_error_dict(errors)
    if errors:
        raise ValidationError(errors)


def delete_unused(instance: models.Model, message: str) -> None:
    """Delete a row no other record points at; one still in use stays and answers 409 with
    `message`. The rule "a record in use cannot be deleted" lives here once; each caller keeps
    its own wording so every endpoint's answer is unchanged."""
    try:
        instance.delete()
    except (ProtectedError, RestrictedError) as exc:
        raise Conflict(message) from exc


def links_clear(records: list[M], field: str, *, user) -> None:
    """Clear the link `field` (a producer, a lienholder: one being deleted, or left behind by a
    client's move to another agency) of each of `records` (loaded whole, as they are now), as
    its update service would leave it: stamped (`updated_by`, `updated_at`) and with a history
    version by `user`, in bulk, two statements however many records (Django's SET_NULL or a
    queryset's `update()` leave neither). The caller announces each record (its event)."""
    if not records:
        return
    now = timezone.now()
    for record in records:
        setattr(record, field, None)
        record.updated_by = user
        record.updated_at = now
    bulk_update_with_history(
        records,
        type(records[0]),
        [field, "updated_by", "updated_at"],
        batch_size=500,
        default_user=user,
    )


def left_behind(changes: Mapping[str, Any], key: str, current_id, *, moves: bool) -> bool:
    """Whether a write that `moves` a record to another agency drops its per-agency link (a
    producer, a lienholder: each agency keeps its own), the rule written once: the link is not
    sent, or sent as it is (a whole record read and sent back with a new agency). A link sent
    anew is the caller's choice, checked against the new agency by the service."""
    return moves and current_id is not None and changes.get(key, current_id) == current_id


def locked_for_update(queryset, user, pk: int, *, of: tuple[str, ...] = ("self",)):
    """The record `pk` among those `user` may see, locked for the write: the rule "a write
    reaches only the caller's agencies' records" at the row the write changes. A record found
    by the view and moved to another agency before its lock was granted (a client's move by a
    user of both agencies, committed meanwhile) is no longer among them: PostgreSQL checks the
    scope again on the row it waited for, and the write answers 404 as for a record never
    seen. `of`: the rows locked (the record's own; its client's too when the scope is read
    through the client)."""
    found = queryset.for_user(user).select_for_update(no_key=True, of=of).filter(pk=pk).first()
    if found is None:
        raise Http404(f"No {queryset.model._meta.verbose_name} with this id.")
    return found


def live_reference(queryset, user, pk: int, *, field: str):
    """The record `pk` that a write names (`vehicleId`, `driverId`, `policyId`), locked: one the
    caller may see, live, of a live client, or a 400 naming `field` (never a hint it exists). A
    soft-deleted record, and a deleted client's records, are gone for every write that refers to
    them, as a new policy or unit on a deleted client is refused. The lock makes a move of the
    record (which checks what refers to it) and this write come one after the other."""
    queryset = queryset.for_user(user).select_for_update(of=("self",))
    found = referable(queryset).filter(pk=pk).first()
    if found is None:
        raise ValidationError({field: f"No {queryset.model._meta.verbose_name} with this id."})
    return found


def rows_lock(queryset) -> None:
    """Lock the queryset's rows for the transaction, in id order (the order every write takes
    within a table, so two writes never wait on each other crosswise). `FOR NO KEY UPDATE`:
    it serialises writes of the rows, not the inserts of rows that point at them (an event, a
    document of the client). Nothing to lock on SQLite, which runs one writer at a time: no
    query there."""
    if connection.features.has_select_for_update:
        list(
            queryset.order_by("pk")
            .select_for_update(no_key=True, of=("self",))
            .values_list("pk", flat=True)
        )


def client_lock_first(model, pk: int) -> None:
    """Lock the client of the record `pk` (a policy, a unit, a document) before the record: the
    order every write takes (a client, its policies, their units, their periods), so a write
    and a client's move or deletion never wait on each other crosswise (a deadlock), and what
    the write reads of the client after this is what the move or deletion left. Nothing on
    SQLite."""
    if connection.features.has_select_for_update:
        client = model._meta.get_field("client").related_model
        owner = model._base_manager.filter(pk=pk).values_list("client_id", flat=True)
        rows_lock(client._base_manager.filter(pk__in=owner))
