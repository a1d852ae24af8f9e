"""Exact list counts that fleets of 250,000 units do not pay for on every page.

Counting a big fleet scans every row of it. When LIST_COUNT_CACHE_SECONDS is set (production,
with the cache in Redis shared by every node), a list's count is kept in the cache under the
SQL that produced it and a data version; any save or delete of a record of the counted apps
moves the version (at once, and again when its transaction commits, so a count read from the
other side of an open transaction is not kept), so no count outlives a write. A list of any
other app (webhook subscriptions and their delivery log, which the relay writes hundreds of
times a second) is counted live. Without the setting every count is live.
"""

from __future__ import annotations

import hashlib
import weakref

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import EmptyResultSet
from django.db import transaction
from django.db.models import QuerySet

VERSION_KEY = "list-count-version"
COUNTED_APPS = {
    "clients",
    "policies",
    "vehicles",
    "drivers",
    "coverages",
    "documents",
    "reports",
    "agencies",
    "compliance",
    "masterdata",
}


def _version() -> int:
    version = cache.get(VERSION_KEY)
    if version is None:
        cache.add(VERSION_KEY, 1, None)
        version = cache.get(VERSION_KEY) or 1
    return version


def _incr() -> None:
    try:
        cache.incr(VERSION_KEY)
    except ValueError:
        cache.add(VERSION_KEY, 1, None)


class _CommitBump:
    """The INCR a transaction queues for its commit, once however many rows it writes (an import
    of N rows queued N)."""

    __slots__ = ("__weakref__", "ran")

    def __init__(self) -> None:
        self.ran = False

    def __call__(self) -> None:
        self.ran = True
        _incr()


def _commit_bump_queued(connection) -> bool:
    # Django holds a queued callback until the commit runs it or a rollback (of the transaction,
    # or of a savepoint it was queued in) discards it: held only there and weakly here, a
    # discarded one is gone, so a later write of the transaction queues another.
    # (An empty queue holds none, whoever else still refers to the last one.)
    ref = getattr(connection, "_count_commit_bump", None)
    bump = ref() if ref is not None and connection.run_on_commit else None
    return bump is not None and not bump.ran


def bump_version(**kwargs) -> None:
    """A record changed: every cached count is stale."""
    if not getattr(settings, "LIST_COUNT_CACHE_SECONDS", 0):
        return
    _incr()  # at once: the writer's own reads in its transaction
    connection = transaction.get_connection(kwargs.get("using"))
    if not connection.in_atomic_block or _commit_bump_queued(connection):
        return  # committed already, or its transaction's commit bumps
    bump = _CommitBump()
    transaction.on_commit(bump, using=kwargs.get("using"))
    connection._count_commit_bump = weakref.ref(bump)


def cache_key(queryset: QuerySet) -> str | None:
    """Where the count of these rows is kept under the current data version; None for rows no
    SQL can select (a caller of no agency is scoped by an empty `IN ()`: Django compiles no
    statement for it, raising EmptyResultSet, and its count is 0 without a query)."""
    # The SQL of the rows counted: without order, and without the relations a page selects
    # with each row (the count ignores them; compiling their joins and columns was a tenth of
    # a list request's CPU).
    query = queryset.order_by().query
    query.select_related = False
    try:
        sql, params = query.sql_with_params()
    except EmptyResultSet:
        return None
    digest = hashlib.sha256(repr((sql, params)).encode()).hexdigest()
    return f"list-count:{_version()}:{digest}"


def count(queryset: QuerySet) -> int:
    ttl = getattr(settings, "LIST_COUNT_CACHE_SECONDS", 0)
    if not ttl or queryset.model._meta.app_label not in COUNTED_APPS:
        return queryset.count()
    key = cache_key(queryset)
    if key is None:
        return queryset.count()  # 0, and no statement
    value = cache.get(key)
    if value is None:
        value = queryset.count()
        cache.set(key, value, ttl)
    return value


def connect_signals() -> None:
    from django.apps import apps
    from django.db.models.signals import post_delete, post_save

    for model in apps.get_models():
        if model._meta.app_label in COUNTED_APPS:
            post_save.connect(bump_version, sender=model, dispatch_uid=f"count-{model._meta.label}")
            post_delete.connect(
                bump_version, sender=model, dispatch_uid=f"count-del-{model._meta.label}"
            )
