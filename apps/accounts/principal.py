"""The caller of a /v1 request, resolved with one SQL round trip and no cache round trip.

What must take effect at once on every node (contract section 13) is read from the database on
every request, in ONE query through primary-key and unique indexes: whether the API key row
exists and is not revoked, the user's row (``is_active``, ``is_superuser``), the ids and names
of the agencies it is a member of, and the permissions version. So a key deleted in the admin,
with a queryset, with raw SQL or with psql, a user deactivated by ``update()``, or a membership
removed by any means, answers 401/404 on the very next request.

What is expensive and changes rarely, the permission set (user permissions plus those of every
group, two joins), is remembered per process under the permissions version the statement
read: database triggers give that version a new value on any change to a permission set's
rows (apps.accounts.models.PermissionsVersion, migration 0002), whoever makes it, Django or raw
SQL. A set remembered under another version is read again, so a permission granted or removed
on any node, by any means, is seen by every node on its next request; the memo is only a copy
of database rows checked against the database on every request, no state that other nodes
would need to share.
"""

from __future__ import annotations

import json

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections

from apps.core.memo import BoundedMemo
from apps.core.prepared import server_prepared

# Permission sets remembered by this process: user id -> ((is_superuser, version), user
# permissions, group permissions). Bounded: emptied when full, refilled one caller at a time.
_PERMISSIONS: BoundedMemo[int, tuple[tuple[bool, int], frozenset[str], frozenset[str]]] = (
    BoundedMemo(4096)
)
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


_SQL_CACHE: dict[str, str] = {}


def _principal_sql(connection) -> str:
    """Key validity, the user's row, its agencies and the permissions version: one
    statement, indexes only."""
    vendor = connection.vendor
    sql = _SQL_CACHE.get(vendor)
    if sql is None:
        from apps.accounts.models import ApiKey, PermissionsVersion

        user_table = get_user_model()._meta.db_table
        membership = apps.get_model("agencies", "AgencyMembership")._meta.db_table
        agency = apps.get_model("agencies", "Agency")._meta.db_table
        key_table = ApiKey._meta.db_table
        version_table = PermissionsVersion._meta.db_table
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
            f" ({agencies}),"
            f" (SELECT v.version FROM {version_table} v WHERE v.id = 1)"
            f" FROM (SELECT 1 AS one) AS anchor LEFT JOIN {user_table} u ON u.id = %s"
        )
        _SQL_CACHE[vendor] = sql
    return sql


def caller_row(*, key_hash: str, user_id) -> tuple[bool, object | None]:
    """(whether the key is active, the user with its agencies or None), in one query.

    The user carries `_agency_ids` (sorted ids, read by `agency_ids_for`), `_agency_refs`
    ((id, name) by name, read by `apps.agencies.selectors.agency_refs`) and
    `_permissions_version` (read by `attach_permissions`)."""
    # The thread's connection looked up once (each `django.db.connection.x` looks it up again).
    connection = connections[DEFAULT_DB_ALIAS]
    # Prepared on the server: the same text on every request, planned once per connection.
    with server_prepared(connection), connection.cursor() as cursor:
        cursor.execute(_principal_sql(connection), [key_hash, user_id])
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
    user._permissions_version = row[2 + len(USER_FIELDS)]
    return key_active, user


def attach_permissions(user) -> None:
    """Give `user` its permission set: remembered by this process under the permissions
    version `caller_row` read, else read (two queries) and remembered.

    ModelBackend reads ``_perm_cache`` (and the user/group halves) before touching the
    database, so has_perm() and get_all_permissions() cost nothing afterwards. The set is
    read after the version, so a change committed in between moves the version again and
    the set is never used under a version older than its rows. No version (its row deleted,
    as by ``flush``): read every time, remembered never.
    """
    version = getattr(user, "_permissions_version", None)
    key = (user.is_superuser, version)
    found = _PERMISSIONS.get(user.pk) if version is not None else None
    if found is not None and found[0] == key:
        user_perms, group_perms = found[1], found[2]
    else:
        from django.contrib.auth.backends import ModelBackend

        backend = ModelBackend()
        user_perms = frozenset(backend.get_user_permissions(user))
        group_perms = frozenset(backend.get_group_permissions(user))
        if version is not None:
            _PERMISSIONS.remember(user.pk, (key, user_perms, group_perms))
    user._user_perm_cache = set(user_perms)
    user._group_perm_cache = set(group_perms)
    user._perm_cache = {*user_perms, *group_perms}
