"""Back to the documented demo world: empty what the demo and its API calls wrote.

docs/api.md is a script of real calls against ids fixed by a fresh seed (client 1, policy 3,
…). Replaying it a second time fails on what the first run created, deleted or scheduled, so
`seed_demo --reset` empties every table except the master data and Django's own catalogue
(content types, permissions, migrations), puts every id sequence back at 1, removes the
stored documents, and seeds again. Master data is kept: it is reference data, loaded
idempotently, and staff may have added insurers to it.
"""

from __future__ import annotations

from django.apps import apps
from django.core.cache import cache
from django.core.files.storage import default_storage
from django.core.management.color import no_style
from django.db import connection

KEPT_APPS = {"masterdata", "contenttypes"}
KEPT_MODELS = {"auth.permission"}


def demo_tables() -> list[str]:
    """Tables of every installed model except the kept ones (auto-created m2m included)."""
    tables = []
    for model in apps.get_models(include_auto_created=True):
        meta = model._meta
        if meta.app_label in KEPT_APPS or meta.label_lower in KEPT_MODELS:
            continue
        if meta.managed and not meta.proxy and meta.db_table not in tables:
            tables.append(meta.db_table)
    existing = set(connection.introspection.table_names())
    return [t for t in tables if t in existing]


def demo_reset() -> None:
    """Empty the demo's tables with their id sequences reset, and its stored documents.

    Not atomic with the seed that follows on purpose: PostgreSQL's TRUNCATE … RESTART
    IDENTITY is what makes ids start again at 1, and it commits on its own.
    """
    from apps.documents.models import Document, DocumentVersion

    storage = default_storage
    names = set(Document.objects.values_list("storage_name", flat=True))
    names |= set(DocumentVersion.objects.values_list("storage_name", flat=True))
    statements = connection.ops.sql_flush(
        no_style(), demo_tables(), reset_sequences=True, allow_cascade=True
    )
    connection.ops.execute_sql_flush(statements)
    for name in names:
        if name and storage.exists(name):
            storage.delete(name)
    # Idempotency answers, throttling counters and cached counts of the old world: a shared
    # cache (Redis) is cleared for every server; a local-memory one only in this process.
    cache.clear()
