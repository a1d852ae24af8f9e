"""The caller of a /v1 request, resolved with one SQL round trip and one cache round trip.

What must take effect at once on every node (contract section 13) is read from the database on
every request, in ONE query through primary-key and unique indexes: whether the API key row
exists and is not revoked, the user's row (``is_active``, ``is_superuser``) and the ids of the
agencies it is a member of. So a key deleted in the admin, with a queryset, with raw SQL or with
psql, a user deactivated by ``update()``, or a membership removed by any means, answers 401/404
on the very next request, whatever the cache holds.

What is expensive and changes rarely, the permission set (user permissions plus those of every
group, two joins), is kept in the shared cache (Redis in production) under a per-user and a
global generation. Every change Django makes that can alter a permission set moves one of them
(signals below: user saved or deleted, groups or permissions of a user changed, permissions of
a group changed, a group or permission deleted); a cached set whose generations are not the
current ones is rebuilt. Permission rows changed by raw SQL outside Django are the one path a
signal cannot see: they take effect within PRINCIPAL_CACHE_SECONDS, or at once with
``principal_bump_all()`` (docs/performance.md explains the trade-off).
"""

from __future__ import annotations

import json
import uuid

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection, transaction

# Bounds how long a permission granted or removed by raw SQL outside Django stays unseen.
PRINCIPAL_CACHE_SECONDS = 300
GLOBAL_GENERATION_KEY = "principal-gen:*"
# Read with the key; the rest of the row (the password hash among it) stays deferred.
# In the model's field order, which Model.from_db() expects.
USER_FIELDS = tuple(
    field.attname
    for field in get_user_model()._meta.concrete_fields
    if field.attname
    in {
        "id",
        "username",
        "first_name",
        "last_name",
        "email",
        "is_staff",
        "is_active",
        "is_superuser",
    }
)


def _generation_key(user_id) -> str:
    return f"principal-gen:{user_id}"


def _principal_key(user_id) -> str:
    return f"principal:{user_id}"


_SQL_CACHE: dict[str, str] = {}


def _principal_sql() -> str:
    """Key validity, the user's row and its agencies: one statement, indexes only."""
    vendor = connection.vendor
    sql = _SQL_CACHE.get(vendor)
    if sql is None:
        from apps.accounts.models import ApiKey

        user_table = get_user_model()._meta.db_table
        membership = apps.get_model("agencies", "AgencyMembership")._meta.db_table
        agency = apps.get_model("agencies", "Agency")._meta.db_table
        key_table = ApiKey._meta.db_table
        # The agencies as a JSON list of [id, name], by name then id (the order of
        # apps.agencies.selectors.agency_list, so /v1/me needs no query of its own).
        members = (
            f"FROM {membership} m JOIN {agency} a ON a.id = m.agency_id WHERE m.user_id = u.id"
        )
        if vendor == "postgresql":
            agencies = (
                "SELECT json_agg(json_build_array(a.id, a.name) ORDER BY a.name, a.id)::text"
                f" {members}"
            )
        else:
            agencies = (
                "SELECT json_group_array(json_array(x.id, x.name))"
                f" FROM (SELECT a.id, a.name {members} ORDER BY a.name, a.id) x"
            )
        columns = ", ".join(f"u.{name}" for name in USER_FIELDS)
        sql = (
            f"SELECT (SELECT COUNT(*) FROM {key_table} k"
            f" WHERE k.key_hash = %s AND k.revoked_at IS NULL), {columns},"
            f" ({agencies})"
            f" FROM (SELECT 1 AS one) AS anchor LEFT JOIN {user_table} u ON u.id = %s"
        )
        _SQL_CACHE[vendor] = sql
    return sql


def caller_row(*, key_hash: str, user_id) -> tuple[bool, object | None]:
    """(whether the key is active, the user with its agencies or None), in one query.

    The user carries `_agency_ids` (sorted ids, read by `agency_ids_for`) and `_agency_refs`
    ((id, name) by name, read by `apps.agencies.selectors.agency_refs`)."""
    with connection.cursor() as cursor:
        cursor.execute(_principal_sql(), [key_hash, user_id])
        row = cursor.fetchone()
    key_active = bool(row[0])
    if row[1] is None:
        return key_active, None
    values = row[1 : 1 + len(USER_FIELDS)]
    user = get_user_model().from_db(connection.alias, list(USER_FIELDS), list(values))
    raw = row[1 + len(USER_FIELDS)]
    refs = [(int(pk), name) for pk, name in json.loads(raw)] if raw else []
    user._agency_refs = refs
    user._agency_ids = sorted(pk for pk, _name in refs)
    return key_active, user


def attach_permissions(user) -> None:
    """Give `user` its permission set from the shared cache (one round trip when warm).

    ModelBackend reads ``_perm_cache`` (and the user/group halves) before touching the
    database, so has_perm() and get_all_permissions() cost nothing afterwards.
    """
    user_gen_key, principal_key = _generation_key(user.pk), _principal_key(user.pk)
    found = cache.get_many([GLOBAL_GENERATION_KEY, user_gen_key, principal_key])
    generations = (found.get(GLOBAL_GENERATION_KEY), found.get(user_gen_key))
    entry = found.get(principal_key)
    if None not in generations and entry is not None and entry[0] == generations:
        user_perms, group_perms = entry[1], entry[2]
    else:
        if None in generations:
            cache.add(GLOBAL_GENERATION_KEY, uuid.uuid4().hex, None)
            cache.add(user_gen_key, uuid.uuid4().hex, None)
            current = cache.get_many([GLOBAL_GENERATION_KEY, user_gen_key])
            generations = (current.get(GLOBAL_GENERATION_KEY), current.get(user_gen_key))
        from django.contrib.auth.backends import ModelBackend

        backend = ModelBackend()
        # Read while the generations above are current: a change that commits meanwhile
        # moves them again, so this entry is never served after it.
        user_perms = backend.get_user_permissions(user)
        group_perms = backend.get_group_permissions(user)
        cache.set(principal_key, (generations, user_perms, group_perms), PRINCIPAL_CACHE_SECONDS)
    user._user_perm_cache = set(user_perms)
    user._group_perm_cache = set(group_perms)
    user._perm_cache = {*user_perms, *group_perms}


def _bump(key: str) -> None:
    cache.set(key, uuid.uuid4().hex, None)


def principal_bump(user_id) -> None:
    """The user's permission set changed: now, and again once the change is committed."""
    key = _generation_key(user_id)
    _bump(key)
    transaction.on_commit(lambda: _bump(key))


def principal_bump_all() -> None:
    """A group's permissions or a permission row changed: every cached set is stale."""
    _bump(GLOBAL_GENERATION_KEY)
    transaction.on_commit(lambda: _bump(GLOBAL_GENERATION_KEY))


def _user_changed(sender, instance, **kwargs) -> None:
    principal_bump(instance.pk)


def _membership_changed(sender, instance, **kwargs) -> None:
    principal_bump(instance.user_id)


def _anything_changed(sender, **kwargs) -> None:
    principal_bump_all()


def _user_m2m_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    if not action.startswith("post_"):
        return
    if not reverse:
        principal_bump(instance.pk)
    else:  # group.user_set.add(...) or permission.user_set.clear(): users named by pk_set
        if pk_set:
            for user_id in pk_set:
                principal_bump(user_id)
        else:
            principal_bump_all()


def connect_signals() -> None:
    from django.contrib.auth.models import Group, Permission
    from django.db.models.signals import m2m_changed, post_delete, post_save

    user_model = get_user_model()
    post_save.connect(_user_changed, sender=user_model, dispatch_uid="principal-user-save")
    post_delete.connect(_user_changed, sender=user_model, dispatch_uid="principal-user-del")
    for label in ("agencies.AgencyMembership",):
        post_save.connect(_membership_changed, sender=label, dispatch_uid=f"principal-{label}")
        post_delete.connect(
            _membership_changed, sender=label, dispatch_uid=f"principal-del-{label}"
        )
    m2m_changed.connect(
        _user_m2m_changed, sender=user_model.groups.through, dispatch_uid="principal-groups"
    )
    m2m_changed.connect(
        _user_m2m_changed,
        sender=user_model.user_permissions.through,
        dispatch_uid="principal-user-perms",
    )
    m2m_changed.connect(
        _anything_changed, sender=Group.permissions.through, dispatch_uid="principal-group-perms"
    )
    for model in (Group, Permission):
        post_delete.connect(
            _anything_changed, sender=model, dispatch_uid=f"principal-del-{model.__name__}"
        )
