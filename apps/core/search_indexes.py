"""Trigram indexes for the lists' "contains" searches (`?name=`, `?owner=`…), PostgreSQL only.

Django's `icontains` on PostgreSQL is `UPPER(column::text) LIKE UPPER('%word%')`: no b-tree
serves a pattern that does not start the value, so a search read every record of the agency (a
client's name among 20,000: 16 ms; a unit's owner among 302,100: 160 ms; issue 18). A GIN index
of that expression's trigrams (pg_trgm) finds the records holding the word's trigrams.

pg_trgm ships with PostgreSQL and is a trusted extension (13 and later): a user allowed to
create objects in the database may create it. Where it cannot be created, or the index cannot
be, the migration leaves the index out, says so in a warning and is recorded as applied; the
search still answers, by reading the records. To build the indexes once pg_trgm is there, run
the migration again: `manage.py migrate clients 0004 && manage.py migrate` (and likewise
`vehicles 0008`, `drivers 0006` and `policies 0007`), whose backward step drops an index only
if it exists. SQLite (the embedded default) has no such index.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, migrations, transaction

logger = logging.getLogger(__name__)


def _trigrams_available(connection) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        if cursor.fetchone():
            return True
        try:
            with transaction.atomic(using=connection.alias):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        except DatabaseError as exc:
            logger.warning("pg_trgm cannot be created (%s): contains-searches stay unindexed", exc)
            return False
    return True


def trigram_index(name: str, table: str, column: str) -> migrations.RunPython:
    """A migration operation: the GIN trigram index `name` of `UPPER(column::text)` on
    `table` (then the table analyzed), on PostgreSQL with pg_trgm; nothing elsewhere.
    Reversible."""

    def forwards(apps, schema_editor):
        connection = schema_editor.connection
        if connection.vendor != "postgresql" or not _trigrams_available(connection):
            return
        quote = schema_editor.quote_name
        try:
            with transaction.atomic(using=connection.alias):
                schema_editor.execute(
                    f"CREATE INDEX IF NOT EXISTS {quote(name)} ON {quote(table)}"
                    f" USING gin ((UPPER({quote(column)}::text)) gin_trgm_ops)"
                )
        except DatabaseError as exc:  # pg_trgm in a schema off the search path, for one
            logger.warning("%s not created (%s): its search stays unindexed", name, exc)
            return
        # The expression's statistics exist only once the table is analyzed; without them
        # PostgreSQL guesses how many records a word matches, and for a word most records
        # hold (the bench's drivers, `?q=driver`) read them all through the index and sorted
        # them (29 ms) instead of walking the list's order and stopping after a page (0.03
        # ms). In a savepoint of its own: an ANALYZE that fails (a lock timeout) leaves the
        # index, and autovacuum analyzes the table later.
        try:
            with transaction.atomic(using=connection.alias):
                schema_editor.execute(f"ANALYZE {quote(table)}")
        except DatabaseError as exc:
            logger.warning("%s made; %s not analyzed (%s)", name, table, exc)

    def backwards(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")

    return migrations.RunPython(forwards, backwards, elidable=False)
