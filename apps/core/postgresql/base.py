"""PostgreSQL with django-prometheus' query metrics and a health check without a round trip.

With persistent connections (`CONN_MAX_AGE`, no pool) Django's `CONN_HEALTH_CHECKS` sends
`SELECT 1` before the first query of every request: for `/v1/me`, whose whole work is one
indexed statement, that doubled the database round trips (issue 18, docs/performance.md). A
connection the server closed (restart, failover, `pg_terminate_backend`, an idle timeout) has
its socket readable: PostgreSQL sends the error and closes, so the end of the stream is
waiting there. A healthy idle connection in autocommit has nothing to read. So the socket is
polled without waiting; only when something is there (that end, or a notice) does Django's own
check run, which drops a dead connection and opens a new one before the request's query. A
peer that vanished without closing (a cable cut) is found by neither check until TCP gives up;
the query then fails and Django closes the connection at the end of that request, as before.

Statements asked again and again with other values (the caller's statement of every /v1 request,
verification's compiled querysets) can be run inside `prepared_statements()`: bound on the
server and prepared once per connection, so PostgreSQL parses and plans them once instead of
on every request. Planning was most of their server CPU (issue 18: 0.45 of 0.5 ms for the
caller's statement; 3.7 ms of PostgreSQL CPU for a one-VIN call, 1.0 ms prepared). Only
those statements: the ORM's other SQL keeps Django's client-side binding, which some of its
queries need (Django ticket #34255). `DATABASE_PREPARED_STATEMENTS=0` turns it off, for a
pooler in transaction mode that cannot keep prepared statements (PgBouncer before 1.21, or
without `max_prepared_statements`).

`run_before_commit` runs work in a transaction just before it commits, once its deferred
constraints are checked (the change feed's commit order, apps.events.positions).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from contextlib import contextmanager, suppress

from django.conf import settings
from django.db.backends.postgresql import base as postgresql
from django.db.transaction import TransactionManagementError
from django_prometheus.db.backends.postgresql import base as instrumented
from psycopg import Pipeline
from psycopg.adapt import AdaptersMap, Dumper
from psycopg.errors import (
    DataError,
    FeatureNotSupported,
    InFailedSqlTransaction,
    InvalidSqlStatementName,
)
from psycopg.postgres import types as postgres_types
from psycopg.pq import Format, TransactionStatus

from apps.core.db_metrics import cursor_wrapper
from apps.core.lookups import IntArray, TextArray
from apps.core.sockets import has_input

TEXT = Format.TEXT


def _has_input(connection) -> bool:
    """Whether the server sent anything (or closed) since the last answer was read."""
    try:
        sock = connection.pgconn.socket
    except Exception:  # closed or broken connection: let Django's check decide
        return True
    return has_input(sock)


def _enabled() -> bool:
    return getattr(settings, "DATABASE_PREPARED_STATEMENTS", True)


class IntArrayDumper(Dumper):
    """An `IntArray` (ints within bigint, apps.core.lookups.as_array) as `bigint[]` text."""

    oid = postgres_types["int8"].array_oid

    def dump(self, obj: IntArray) -> bytes:
        return ("{" + ",".join(map(str, obj)) + "}").encode()


class TextArrayDumper(Dumper):
    """A `TextArray` as `text[]` text, every element quoted (so an empty string, NULL, spaces,
    commas and braces are values) with its double quotes and backslashes escaped."""

    oid = postgres_types["text"].array_oid

    def dump(self, obj: TextArray) -> bytes:
        # Two replaces per value only when some value has a quote or a backslash: 200 DOTs
        # (digits) are joined as they are (400 calls fewer, issue 18).
        everything = "".join(obj)
        if "\\" in everything or '"' in everything:
            quoted = '","'.join([v.replace("\\", "\\\\").replace('"', '\\"') for v in obj])
        else:
            quoted = '","'.join(obj)
        if "\x00" in quoted:  # as psycopg's own string dumper refuses it
            raise DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
        return ('{"' + quoted + '"}').encode() if obj else b"{}"


@functools.cache
def _with_array_dumpers(template: AdaptersMap) -> AdaptersMap:
    """Django's adapters (one template per time zone setting) with the array dumpers."""
    adapters = AdaptersMap(template)
    adapters.register_dumper(IntArray, IntArrayDumper)
    adapters.register_dumper(TextArray, TextArrayDumper)
    return adapters


def _no_flush() -> None:
    """Nothing to flush: the statements ran when they were executed."""


# A prepared statement the server forgot (a pooler's DISCARD ALL), or whose result type changed
# underneath ("cached plan must not change result type").
STALE_STATEMENT_ERRORS = (FeatureNotSupported, InvalidSqlStatementName)


class PreparingCursor(postgresql.ServerBindingCursor):
    """Django's server-binding cursor, every statement prepared on its connection (psycopg
    keeps the statements it prepared per connection, the last 100, and sends each by name)."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        try:
            return super().execute(query, params, prepare=True, binary=binary)
        except STALE_STATEMENT_ERRORS:
            # A migration run from another connection changed a column a prepared statement
            # returns ("cached plan must not change result type"), or the server forgot its
            # statements (a pooler's DISCARD ALL). psycopg forgets its own only on a ROLLBACK
            # or a DROP/ALTER/DEALLOCATE ALL it runs itself, so outside a transaction every
            # later call on this connection would fail the same way. DEALLOCATE ALL makes both
            # sides forget; the statement is then prepared afresh, once. Inside a transaction
            # the error stands: the transaction is aborted, and its ROLLBACK clears them.
            if self.connection.info.transaction_status != TransactionStatus.IDLE:
                raise
            self.connection.execute("DEALLOCATE ALL")
            return super().execute(query, params, prepare=True, binary=binary)


class DatabaseOperations(postgresql.DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        # A statement run by name keeps no text of its own: the SQL with its values, as Django
        # shows a server-bound statement (for connection.queries and assertNumQueries).
        if isinstance(cursor, PreparingCursor):
            try:
                return postgresql.Database.ClientCursor(cursor.connection).mogrify(sql, params)
            except postgresql.Database.DataError:
                return None
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(instrumented.DatabaseWrapper):
    ops_class = DatabaseOperations
    _preparing = False
    stale_statement_errors = STALE_STATEMENT_ERRORS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._before_commit: dict[str, Callable[[], object]] = {}

    def run_before_commit(self, key: str, func: Callable[[], object]) -> None:
        """Run `func()` in the current transaction just before it commits, once per `key` (a
        second call with the key changes nothing: `before_commit_hook` gives the first), after
        every deferred constraint has been checked (`SET CONSTRAINTS ALL IMMEDIATE`), so that
        a lock `func` takes is taken last, by a transaction with no row lock left to wait for
        (the change feed's commit order takes one). Forgotten when the transaction rolls back;
        one registered inside a savepoint rolled back still runs (it must find its own work
        to do). Inside a transaction (`atomic`) only: in autocommit a statement commits on its
        own."""
        if not self.in_atomic_block:
            raise TransactionManagementError("run_before_commit() needs a transaction.")
        self._before_commit.setdefault(key, func)

    def before_commit_hook(self, key: str) -> Callable[[], object] | None:
        """The `key` hook the current transaction will run when it commits, if any."""
        return self._before_commit.get(key)

    def _commit(self):
        hooks, self._before_commit = self._before_commit, {}
        if hooks and self.connection is not None:
            with self.wrap_database_errors:
                self.connection.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for func in hooks.values():
                func()
        return super()._commit()

    def _rollback(self):
        self._before_commit = {}
        return super()._rollback()

    def _close(self):
        self._before_commit = {}
        return super()._close()

    @contextmanager
    def prepared_statements(self):
        """Cursors opened inside bind on the server and prepare their statements (see the
        module's docstring). A wrapper serves one thread, so a flag on it is the thread's."""
        if self._preparing or not _enabled():
            yield
            return
        self._preparing = True
        try:
            yield
        finally:
            self._preparing = False

    @contextmanager
    def pipelined(self):
        """Statements executed inside are sent at once and their rows read when fetched
        (psycopg's pipeline mode): the server runs them while the thread goes on with its
        Python (apps.core.prepared's `PreparedQuery.sent`). Yields `flush`, which asks the
        server to send what it has answered so far (a Flush message, which has no answer of
        its own): called after the statements, their rows travel while the Python runs, and
        reading them costs no round trip of its own. Errors reach the caller as Django's.
        Without pipeline support in the client library, statements run when executed."""
        self.ensure_connection()
        if not Pipeline.is_supported():
            yield _no_flush
            return
        pgconn = self.connection.pgconn

        def flush() -> None:
            pgconn.send_flush_request()
            pgconn.flush()

        with self.wrap_database_errors, self.connection.pipeline():
            yield flush

    @contextmanager
    def joins_in_written_order(self):
        """Statements run inside are planned with their joins in the order they are written
        (`join_collapse_limit` 1, set on the session and reset after): for a statement that
        selects rows by primary key and joins each to the records it points to, the written
        order is the best plan whatever the values, and searching the others was most of its
        cost (a list page's rows: 4-5 ms of planning against 0.3-0.4 ms of execution, issue
        18). Two round trips on the raw connection, around the statements: session settings,
        not statements of the request (not counted or logged). Off with
        `DATABASE_PREPARED_STATEMENTS=0`, for a pooler in transaction mode, which may run the
        SET and the RESET on different server sessions."""
        if not _enabled():
            yield
            return
        self.ensure_connection()
        raw = self.connection
        raw.execute("SET join_collapse_limit = 1")
        try:
            yield
        finally:
            # In an aborted transaction the RESET is refused; its rollback undoes the SET.
            with suppress(InFailedSqlTransaction):
                raw.execute("RESET join_collapse_limit")

    def get_connection_params(self):
        # Django's parameters, its cursors wrapped by django-prometheus's metrics with the
        # children bound once (apps.core.db_metrics) instead of instrumented's labels() per query.
        params = postgresql.DatabaseWrapper.get_connection_params(self)
        params["cursor_factory"] = cursor_wrapper(params["cursor_factory"], self.alias, self.vendor)
        if "context" in params:
            params["context"] = _with_array_dumpers(params["context"])
        # Django turns psycopg's prepared statements off (None). A threshold no count reaches
        # keeps them off for every statement but those a PreparingCursor asks to prepare.
        if params.get("prepare_threshold") is None and _enabled():
            params["prepare_threshold"] = sys.maxsize
        return params

    def create_cursor(self, name=None):
        if self._preparing and name is None:
            # django-prometheus' metrics, as on every other cursor
            factory = cursor_wrapper(PreparingCursor, self.alias, self.vendor)
            cursor = factory(self.connection, row_factory=self.connection.row_factory)
            # As Django's create_cursor: the cursor's time zone only if the connection's differs.
            loader = self.connection.adapters.get_loader(postgresql.TIMESTAMPTZ_OID, TEXT)
            if self.timezone != loader.timezone:
                postgresql.register_tzloader(self.timezone, cursor)
            return cursor
        return super().create_cursor(name)

    def close_if_health_check_failed(self):
        if (
            self.connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and not self.pool
            and not _has_input(self.connection)
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()
