"""The caller of a /v1 request: one SQL statement, or one shared-cache read of its answer.

What must take effect at once on every node (contract section 13) is read from the database in
ONE query through primary-key and unique indexes: whether the API key row exists and is not
revoked, the user's row (``is_active``, ``is_superuser``), the ids and names of the agencies it
is a member of, the permissions version, and the user's password hash, of which only a digest
is kept (apps.accounts.tokens: a token issued under another password is refused). Read on every
request (``PRINCIPAL_CACHE_SECONDS`` 0), a key deleted in the admin, with a queryset, with raw
SQL or with psql, a user deactivated by ``update()``, a password changed by any means, or a
membership removed by any means, answers 401/404 on the very next request; kept in the shared
cache, see the last paragraph.

What is expensive and changes rarely, the permission set (user permissions plus those of every
group, two joins), is remembered per process under the permissions version the statement
read: database triggers give that version a new value on any change to a permission set's
rows (apps.accounts.models.PermissionsVersion, migration 0002), whoever makes it, Django or raw
SQL. A set remembered under another version is read again, so a permission granted or removed
on any node, by any means, is seen by every node on its next request (with the caller read
live; kept in the shared cache, the version is part of the entry: see below); the memo is only
a copy of database rows checked against the version, no state that other nodes would need to
share.

With a shared cache (``PRINCIPAL_CACHE_SECONDS`` > 0, the default with a ``redis://``
CACHE_URL), `caller` keeps that one statement's answer for a valid caller in the shared cache,
tagged with the principals' generation, and answers from one cache round trip (an ``MGET`` of
the generation and the entry) instead of the statement (issue 18: the statement was a third of
an API call's cost under load). The entry keeps the password's digest, never its hash. Every
save, delete and relation change that Django makes to what the statement reads (an API key, a
user, its password included, a membership, an agency, a group's or a user's permissions;
through the API, the admin, the services, a command or a shell) makes the generation pending at
once and gives it a new value when its transaction commits (apps.accounts.signals,
`principals_changed`), so every node reads the database again on its next request: contract
section 13's "at once on every node" holds for every change made through the application. A
change made behind Django's back (psql, raw SQL, a queryset's ``update()`` or ``bulk_*``) sends
no signal; it takes effect when the entry expires, within ``PRINCIPAL_CACHE_SECONDS`` (5 by
default). So does a generation a Redis failover lost (the primary's last writes, never copied
to the new one). ``PRINCIPAL_CACHE_SECONDS=0`` reads the database on every request, for every
change however made, as without a shared cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from apps.accounts.tokens import password_digest
from apps.core.cache import packed_command, send_packed
from apps.core.memo import BoundedMemo
from apps.core.prepared import server_prepared

# Permission sets remembered by this process: user id -> ((is_superuser, version), user
# permissions, group permissions). Bounded: emptied when full, refilled one caller at a time.
_PERMISSIONS: BoundedMemo[int, tuple[tuple[bool, int], frozenset[str], frozenset[str]]] = (
    BoundedMemo(4096)
)
# Read with the key; the rest of the row stays deferred. In the model's field order, which
# Model.from_db() expects. The password hash is read too, but only its digest is kept: never on
# the user, never in the shared cache.
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
# The principals' generation: a random value, never a counter, so that a generation lost
# (evicted, flushed) and made again never matches an entry written under the old one.
GENERATION_KEY = "principal:generation"
logger = logging.getLogger(__name__)
# A generation moved by a transaction that has not committed yet, and how long it stays so
# if its commit's move is lost.
PENDING = "pending:"
PENDING_SECONDS = 60
# The entries' layout: USER_FIELDS in order, then the agencies, the permissions version and the
# password's digest, with the digest of a fixed text (which changes with the signing key that
# keys every digest). In the key, so that a deploy that changes either never reads an entry of
# the other layout, nor compares new tokens with digests made under the old key.
ENTRY_FIELDS = (*USER_FIELDS, "agencies", "permissions_version", "password_digest")
ENTRY_LAYOUT = hashlib.sha256(
    f"{','.join(ENTRY_FIELDS)};{password_digest('entry layout')}".encode()
).hexdigest()[:8]
# Entry key -> its packed MGET (the generation's key and the entry's).
_PACKED: BoundedMemo[str, bytes] = BoundedMemo(4096)


def _principal_sql(connection) -> str:
    """Key validity, the user's row, its agencies, the permissions version and the password
    hash: one statement, indexes only."""
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
            f" (SELECT v.version FROM {version_table} v WHERE v.id = 1), u.password"
            f" FROM (SELECT 1 AS one) AS anchor LEFT JOIN {user_table} u ON u.id = %s"
        )
        _SQL_CACHE[vendor] = sql
    return sql


def caller_row(*, key_hash: str, user_id) -> tuple[bool, object | None]:
    """(whether the key is active, the user with its agencies or None), in one query.

    The user carries `_agency_ids` (sorted ids, read by `agency_ids_for`), `_agency_refs`
    ((id, name) by name, read by `apps.agencies.selectors.agency_refs`),
    `_permissions_version` (read by `attach_permissions`) and `_password_digest` (compared with
    the token's, apps.accounts.tokens.issued_under)."""
    # The thread's connection looked up once (each `django.db.connection.x` looks it up again).
    connection = connections[DEFAULT_DB_ALIAS]
    # Prepared on the server: the same text on every request, planned once per connection.
    with server_prepared(connection), connection.cursor() as cursor:
        cursor.execute(_principal_sql(connection), [key_hash, user_id])
        row = cursor.fetchone()
    key_active = bool(row[0])
    if row[1] is None:
        return key_active, None
    values = list(row[1 : 1 + len(USER_FIELDS)])
    raw = row[1 + len(USER_FIELDS)]
    refs = [[int(pk), name] for pk, name in json.loads(raw)] if raw else []
    digest = password_digest(row[3 + len(USER_FIELDS)])
    return key_active, _user(values, refs, row[2 + len(USER_FIELDS)], digest)


def _user(values: list, refs: list, version, digest: str):
    user = get_user_model().from_db(DEFAULT_DB_ALIAS, list(USER_FIELDS), values)
    user._agency_refs = [(pk, name) for pk, name in refs]
    user._agency_ids = sorted(pk for pk, _name in refs)
    user._permissions_version = version
    user._password_digest = digest
    user._principal = (values, refs, version, digest)
    return user


def caller(*, key_hash: str, user_id: int) -> tuple[bool, object | None]:
    """`caller_row`'s answer, from the shared cache when PRINCIPAL_CACHE_SECONDS > 0.

    One round trip reads the generation and this caller's entry; an entry written under
    another generation (or none) is not used: the statement is read and, for an active key and
    an active user, kept under the generation read BEFORE it, so a change committed meanwhile
    (which moves the generation) is never hidden by the entry. Nothing is kept while the
    generation is pending (a write's transaction has not committed yet), and a refused caller
    is never kept: it reads the database every time, as before."""
    seconds = settings.PRINCIPAL_CACHE_SECONDS
    if seconds <= 0:
        return caller_row(key_hash=key_hash, user_id=user_id)
    entry_key = f"principal:{ENTRY_LAYOUT}:{key_hash}:{user_id}"
    generation, entry = _generation_and_entry(entry_key)
    if generation is not None and entry is not None and entry[0] == generation:
        return True, _user(*entry[1])
    key_active, user = caller_row(key_hash=key_hash, user_id=user_id)
    if generation is None:
        cache.add(GENERATION_KEY, secrets.token_hex(8), None)
    elif (
        key_active
        and user is not None
        and user.is_active
        and not str(generation).startswith(PENDING)
    ):
        cache.set(entry_key, (generation, user._principal), seconds)
    return key_active, user


def _generation_and_entry(entry_key: str) -> tuple[object, object]:
    """The generation and the entry, in one round trip: on Redis an MGET packed once per caller
    and sent on the thread's own connection (apps.core.cache.send_packed), on the primary (a
    replica could lag behind a new generation); on other caches, `get_many`."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        found = cache.get_many([GENERATION_KEY, entry_key])
        return found.get(GENERATION_KEY), found.get(entry_key)
    keys = [backend.make_key(GENERATION_KEY), backend.make_key(entry_key)]
    client = backend._cache.get_client(write=True)
    packed = _PACKED.get(entry_key)
    if packed is None:
        packed = packed_command(client, "MGET", *keys)
        _PACKED.remember(entry_key, packed)
    answer = send_packed(client, packed, fallback=lambda: client.mget(keys))
    loads = backend._cache._serializer.loads
    return tuple(None if value is None else loads(value) for value in answer)


def principals_changed(using: str = DEFAULT_DB_ALIAS) -> None:
    """Every node reads every caller from the database on its next request.

    Outside a transaction the write is committed already: the generation takes a new value.
    Inside one, the generation is made pending at once (no entry is kept under a pending
    generation, and none kept before matches it) and takes a new value when the transaction
    commits. Should that last move be lost (the shared cache unreachable at that moment, an
    earlier on-commit callback failing, the process killed between the commit and it), the
    pending generation expires after PENDING_SECONDS and a new one is made: until then every
    caller is read from the database, never from an entry older than the change. Once per
    transaction, however many rows it writes. A shared cache that cannot be reached does not
    fail the write (a revocation must never be refused for it): logged; no node reads an
    entry from it meanwhile, and one kept before expires within PRINCIPAL_CACHE_SECONDS."""
    if settings.PRINCIPAL_CACHE_SECONDS <= 0:
        return
    connection = connections[using or DEFAULT_DB_ALIAS]
    if not connection.in_atomic_block:
        _move_generation(secrets.token_hex(8), None)
        return
    if any(callback is _generation_after_commit for _, callback, _ in connection.run_on_commit):
        return  # this transaction has made it pending already
    _move_generation(PENDING + secrets.token_hex(8), PENDING_SECONDS)
    transaction.on_commit(_generation_after_commit, using=connection.alias, robust=True)


def _generation_after_commit() -> None:
    _move_generation(secrets.token_hex(8), None)


def _move_generation(value: str, timeout) -> None:
    try:
        cache.set(GENERATION_KEY, value, timeout)
    except Exception:
        logger.exception("The principals' generation could not be moved.")


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
