"""Querysets of a fixed shape, compiled to SQL once per process and run with each call's values.

Verification asks the same three or four questions on every call, only the values change (the
caller's agencies, the DOTs or the VIN, the date). Building and compiling those querysets was
about half of the Python a one-DOT call costs (issue 18): filters resolved, joins set up, the
ordering resolved, each expression compiled, for SQL that is the same string every time.

`PreparedQuery` keeps the queryset where the rules are stated (the builder is an ordinary
queryset: `live()`, `not_ended_on(on)`, `for_agencies(...)`), compiles it once per *shape*
(which values are None, booleans, how long each list is) with placeholder values the second
time that shape is asked for (a shape seen once, such as a batch's length, may never come
again), and afterwards only puts each call's values into the SQL's parameters. Nothing is
written twice: the SQL is the builder's, and the rows become objects through Django's own
iterables; a `values_list()` of columns (verification's rows) is run straight on the
connection's cursor, its converters found once per shape, which was most of what a prepared
call still cost (a queryset cloned, a compiler copied, the converters looked up per column).

A list a builder filters with `__in_list` (apps.core.lookups) is named in `arrays`: where it
is sent as one array parameter (PostgreSQL) its length is not part of the shape (only whether
it has none, one or more values), so 200 DOTs, 201 DOTs and a batch of 1,000 VINs share one
template; elsewhere (SQLite) each length is a shape
as for any list.

Safety: on the first call of a shape the builder is also compiled with the call's real values
and the two compilations must give the same SQL, with every parameter either a constant of
the query or exactly a value of the call; otherwise the shape is never prepared and every
call compiles as before. A builder must therefore state its query from the shape alone (no
`if on < X`), which the check also catches for the first call's values.

On PostgreSQL a prepared shape's statement is also prepared on the server (`server_prepared`),
so the database plans it once per connection instead of on every call.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import functools
import itertools
from collections.abc import Callable
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import QuerySet, prefetch_related_objects
from django.db.models.expressions import RawSQL
from django.db.models.query import ValuesListIterable
from django.db.models.sql import Query
from django.db.models.sql.where import ExtraWhere

from apps.core.lookups import binds_lists_as_arrays
from apps.core.memo import BoundedMemo

_NOT_PREPARED, _SEEN, _UNSEEN = object(), object(), object()
_counter = itertools.count(1)


def server_prepared(connection: BaseDatabaseWrapper):
    """A context in which `connection`'s cursors have their statements prepared on the server
    (apps.core.postgresql's `prepared_statements`); nothing on a backend without it (SQLite).

    For statements of a fixed text asked with other values on every call: each distinct text
    is planned once per connection and kept there (psycopg keeps the last 100 a connection
    prepared), so a text that varies with the values must not run inside."""
    prepared = getattr(connection, "prepared_statements", None)
    return prepared() if prepared is not None else contextlib.nullcontext()


def pipelined(connection: BaseDatabaseWrapper):
    """A context in which `connection`'s statements are sent at once and their rows read when
    fetched (apps.core.postgresql's `pipelined`); it yields `flush`, to call after them.
    Elsewhere (SQLite) a statement runs when it is executed, which gives the same rows."""
    pipeline = getattr(connection, "pipelined", None)
    return pipeline() if pipeline is not None else contextlib.nullcontext(_nothing)


def _nothing() -> None:
    """No flush: the statements ran when they were executed."""


def _stale_statement(connection: BaseDatabaseWrapper, exc: DatabaseError) -> bool:
    """Whether a prepared statement failed because the server forgot it or its result type
    changed (what apps.core.postgresql's `PreparingCursor` recovers from)."""
    stale = getattr(connection, "stale_statement_errors", ())
    return bool(stale) and isinstance(exc.__cause__, stale)


def joins_in_written_order(connection: BaseDatabaseWrapper):
    """A context in which `connection`'s statements are planned with their joins in the order
    they are written (apps.core.postgresql's `joins_in_written_order`); nothing on a backend
    without it (SQLite)."""
    fixed = getattr(connection, "joins_in_written_order", None)
    return fixed() if fixed is not None else contextlib.nullcontext()


def _is_flat(query: Query) -> bool:
    """Whether a query reads its model's table and what it joins to, nothing else: no subquery
    (`Exists`, `Subquery`), aggregate or window in its filters, annotations or order, no
    `extra()`, no DISTINCT, no UNION. Planned with its joins in written order, such a query by
    primary key starts at that row; a subquery's joins would be forced into their written
    order too, whatever that costs."""
    if (
        query.extra
        or query.extra_select
        or query.extra_tables
        or query.extra_order_by
        or query.distinct
        or query.combinator
    ):
        return False
    nodes = [query.where, *query.annotations.values()]
    nodes += [term for term in query.order_by if not isinstance(term, str)]
    # A FilteredRelation's condition is part of its join.
    nodes += [
        join.filtered_relation.condition
        for join in query.alias_map.values()
        if getattr(join, "filtered_relation", None) is not None
    ]
    while nodes:
        node = nodes.pop()
        if (
            isinstance(node, (Query, RawSQL, ExtraWhere))
            or getattr(node, "query", None) is not None  # Subquery, Exists
            or getattr(node, "contains_aggregate", False)
            or getattr(node, "contains_over_clause", False)
        ):
            return False
        if isinstance(node, (list, tuple)):  # a lookup's values (`__in`, `__range`)
            nodes.extend(node)
            continue
        children = getattr(node, "children", None)  # a WhereNode's or a Q's conditions
        if children is None and hasattr(node, "get_source_expressions"):
            children = node.get_source_expressions()
            rhs = getattr(node, "rhs", None)  # a lookup leaves a list of values out
            if isinstance(rhs, (list, tuple)):
                children = [*children, rhs]
        for child in children or ():
            if isinstance(child, tuple) and len(child) == 2 and isinstance(child[0], str):
                child = child[1]  # a Q's ("field__lookup", value)
            if child is not None:
                nodes.append(child)
    return True


def record_by_key(queryset: QuerySet, get: Callable[[QuerySet], Any]):
    """`get(queryset)`, which reads one record of `queryset` by its primary key (`queryset.get(
    pk=...)`, `get_object_or_404(queryset, pk=...)`), its statement prepared on the server and
    planned with its joins in written order, the queryset's prefetches read afterwards as
    Django reads them.

    A record shown whole joins everything it points to (a vehicle: its client, unit type,
    make, plate state, lienholder and two users): PostgreSQL spent 3-6 ms planning that
    statement on every request against 0.1-0.2 ms running it (issue 18). Its text is the same
    for every key, the key is unique, so its plan is too. A queryset that is not flat
    (`_is_flat`) is read as it is; so are the prefetches (their own statements, planned as
    before)."""
    if not _is_flat(queryset.query):
        return get(queryset)
    lookups = queryset._prefetch_related_lookups
    connection = connections[queryset.db]
    with server_prepared(connection), joins_in_written_order(connection):
        record = get(queryset.prefetch_related(None) if lookups else queryset)
    if lookups and record is not None:
        prefetch_related_objects([record], *lookups)
    return record


def _placeholder(value):
    """A value of the same type that no query states as a constant (dates in year 1001+,
    large negative integers, marked strings), unique within the process."""
    n = next(_counter)
    if isinstance(value, dt.datetime):
        return None
    if isinstance(value, dt.date):
        return dt.date(1000 + n % 8000, 1 + n // 8000 % 12, 1)
    if isinstance(value, int):
        return -(10**12) - n
    if isinstance(value, str):
        return f"@@prepared-{n}@@"
    return None


def _is_slot(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, str, dt.date))


class _Prepared(Query):
    """A query whose SQL is already known: its compiler answers it instead of compiling."""

    prepared: tuple  # (template compiler, sql, params)

    def clone(self):
        # Filtering, slicing or counting would change the query but not the prepared SQL.
        raise TypeError("A prepared query is run as it is; build another queryset instead.")

    def get_compiler(self, using=None, connection=None, elide_empty=True):
        template, sql, params = self.prepared
        compiler = copy.copy(template)
        compiler.query = self
        compiler.connection = connection if connection is not None else connections[using]
        compiler.as_sql = lambda *args, **kwargs: (sql, params)
        return compiler


class _Template:
    __slots__ = ("compiler", "converters", "queryset", "rows", "sources", "sql")

    def __init__(self, queryset, compiler, sql, sources):
        self.queryset, self.compiler, self.sql, self.sources = queryset, compiler, sql, sources
        # A `values_list()` of plain columns (the rows verification reads) is run on a cursor
        # as Django's compiler would run it, without a queryset cloned and a compiler copied,
        # its converters looked up again, for every call (`PreparedQuery._rows`). Models and
        # anything else go through the queryset.
        fields = [column[0] for column in compiler.select[: compiler.col_count]]
        self.rows = (
            queryset._iterable_class is ValuesListIterable
            and not compiler.has_extra_select
            and not compiler.has_composite_fields(fields)
        )
        # The converters depend on the fields and the backend only: the template belongs to
        # one database alias, whose connections (one per thread) share their backend.
        self.converters = compiler.get_converters(fields) if self.rows else None


class _ReadOnce:
    """The rows of `PreparedQuery.sent`, read when called, once."""

    __slots__ = ("_read",)

    def __init__(self, read: Callable[[], list]):
        self._read = read

    def __call__(self) -> list:
        read, self._read = self._read, None
        if read is None:
            raise RuntimeError("The rows of a statement sent ahead are read once.")
        return read()


class PreparedQuery:
    """`build(**values)` returns a queryset; `fetch(**values)` returns its rows (a list), the
    SQL compiled once per shape of the values (see the module's docstring)."""

    # A template keeps its SQL and one parameter source per value (about 0.5 KiB a value): at
    # most `limit` shapes of at most `most_values` values each are kept (200 DOTs and their
    # 300 policies fit), about 8 MiB a query at worst and a few hundred KiB in practice;
    # longer calls (a 1,000-unit batch) compile as before, compiling being a small part of
    # their cost.
    # A list of `arrays` sent as one array parameter counts as one value, whatever its length.
    def __init__(
        self,
        build: Callable[..., QuerySet],
        limit: int = 32,
        most_values: int = 512,
        arrays: tuple[str, ...] = (),
    ):
        self.build = build
        self.most_values = most_values
        self.arrays = frozenset(arrays)
        self.templates: BoundedMemo[tuple, Any] = BoundedMemo(limit)

    def _as_array(self, name: str) -> bool:
        return name in self.arrays and _arrays_bound()

    def shape(self, values: dict) -> tuple | None:
        """What the SQL may depend on: names, the None and boolean values, each list's length
        and its values' types (None: values of a kind or number that is never prepared); for
        a list sent as an array, its one type of value and whether it has none, one or more."""
        key = []
        total = 0
        for name, value in sorted(values.items()):
            if isinstance(value, (list, tuple)) and self._as_array(name):
                kinds = {type(v) for v in value}
                if len(kinds) > 1 or not all(_is_slot(v) for v in value[:1]):
                    return None
                total += 1
                key.append((name, "array", type(value), tuple(kinds), min(len(value), 2)))
            elif isinstance(value, (list, tuple)):
                total += len(value)
                if total > self.most_values or not all(_is_slot(v) for v in value):
                    return None
                key.append((name, len(value), tuple(type(v) for v in value)))
            elif value is None or isinstance(value, bool):
                key.append((name, value))
            elif _is_slot(value):
                key.append((name, type(value)))
            else:
                return None
        return tuple(key)

    def fetch(self, **values) -> list:
        return self._fetch(self._template(values), values)

    @contextlib.contextmanager
    def sent(self, **values):
        """`fetch` in two steps, for a caller with work to do meanwhile: the statement is sent
        on entering, and the rows are read by calling what the context yields (once, inside
        it). On PostgreSQL a prepared `values_list()` is sent in psycopg's pipeline mode, with
        a request that the server send its answer at once, so the database runs it and its
        rows travel while the caller's Python goes on: a 200-DOT answer reads its limits this
        way, 0.3-0.4 ms sooner on the bench's local database (issue 18). The block should run
        no statement of its own on the connection (one would wait for this one). Anything
        else is fetched on entering. Django's query log and the database metrics time such a
        statement's sending, not its rows.

        A statement the server no longer knows under its name, or whose result type changed
        underneath (see `PreparingCursor` in apps.core.postgresql), fails when its rows are
        read; outside a transaction it is then asked again as `fetch` asks it, which prepares
        it afresh."""
        template = self._template(values)
        if template is _NOT_PREPARED or not template.rows:
            fetched = self._fetch(template, values)
            yield _ReadOnce(lambda: fetched)
            return
        params = tuple(source(values) for source in template.sources)
        connection = connections[template.queryset.db]
        with contextlib.ExitStack() as stack:
            stack.enter_context(server_prepared(connection))
            cursor = stack.enter_context(connection.cursor())
            pipeline = stack.enter_context(contextlib.ExitStack())
            flush = pipeline.enter_context(pipelined(connection))
            cursor.execute(template.sql, params)
            flush()

            def rows() -> list[tuple]:
                try:
                    fetched = cursor.fetchall()
                except DatabaseError as exc:
                    if not _stale_statement(connection, exc) or connection.in_atomic_block:
                        raise
                    with contextlib.suppress(DatabaseError):  # the pipeline's own report of it
                        pipeline.close()
                    return self._fetch(template, values)
                pipeline.close()
                return self._converted(template, connection, fetched)

            yield _ReadOnce(rows)

    def _template(self, values: dict):
        key = self.shape(values)
        template = _NOT_PREPARED if key is None else self.templates.get(key, _UNSEEN)
        if template is _UNSEEN:  # a shape seen once is not prepared: it may never come again
            self.templates.remember(key, _SEEN)
            template = _NOT_PREPARED
        elif template is _SEEN:
            template = self._prepare(values)
            self.templates.remember(key, template)
        return template

    def _fetch(self, template, values: dict) -> list:
        if template is _NOT_PREPARED:
            return list(self.build(**values))
        params = tuple(source(values) for source in template.sources)
        if template.rows:
            return self._rows(template, params)
        queryset = template.queryset._chain()
        queryset.query.__class__ = _Prepared  # as Query.chain(klass=...) does
        queryset.query.prepared = (template.compiler, template.sql, params)
        with server_prepared(connections[queryset.db]):
            return list(queryset)

    @staticmethod
    def _rows(template: _Template, params: tuple) -> list[tuple]:
        """The rows of a prepared `values_list()`: what `ValuesListIterable` and the compiler's
        `results_iter` give, the SQL run on the connection's cursor (so it is counted, logged
        and prepared on the server as any other) and each converter applied as Django does."""
        connection = connections[template.queryset.db]
        with server_prepared(connection), connection.cursor() as cursor:
            cursor.execute(template.sql, params)
            rows = cursor.fetchall()
        return PreparedQuery._converted(template, connection, rows)

    @staticmethod
    def _converted(template: _Template, connection, rows) -> list[tuple]:
        if not template.converters:
            return rows if type(rows) is list else list(rows)
        compiler = copy.copy(template.compiler)
        compiler.connection = connection
        return list(map(tuple, compiler.apply_converters(rows, template.converters)))

    def _prepare(self, values: dict):
        """Compile the builder with placeholders and with the call's values; the template if
        they agree as the module's docstring says, else `_NOT_PREPARED`."""
        where: dict = {}  # a placeholder as it reaches the parameters -> (name, index, adapt)
        placeholders = {}
        for name, value in values.items():
            if isinstance(value, (list, tuple)) and len(value) > 1 and self._as_array(name):
                made = [_placeholder(v) for v in value]
                placeholders[name] = type(value)(made)
                if any(p is None for p in made):
                    return _NOT_PREPARED
                # The list reaches the parameters whole, as one array (its class is the one
                # the template's parameter has: apps.core.lookups.as_array).
                where[(list, tuple(made))] = (name, None, list)
                slots = []
            elif isinstance(value, (list, tuple)):
                made = [_placeholder(v) for v in value]
                placeholders[name] = type(value)(made)
                slots = [(p, (name, i)) for i, p in enumerate(made)]
            elif _is_slot(value):
                placeholders[name] = made = _placeholder(value)
                slots = [(made, (name, None))]
            else:
                placeholders[name] = value
                slots = []
            for made, (slot_name, index) in slots:
                if made is None:
                    return _NOT_PREPARED
                where[(type(made), made)] = (slot_name, index, None)
                if isinstance(made, dt.date):  # SQLite receives dates as ISO strings
                    where[(str, str(made))] = (slot_name, index, str)
        try:
            template_qs = self.build(**placeholders)
            real_qs = self.build(**values)
            compiler = template_qs.query.get_compiler(using=template_qs.db)
            sql, template_params = compiler.as_sql()
            real_sql, real_params = real_qs.query.get_compiler(using=real_qs.db).as_sql()
        except EmptyResultSet:
            return _NOT_PREPARED
        if sql != real_sql or len(template_params) != len(real_params):
            return _NOT_PREPARED
        if template_qs.db != real_qs.db:
            return _NOT_PREPARED
        sources = []
        for made, real in zip(template_params, real_params, strict=True):
            if isinstance(made, list):
                slot = where.get((list, tuple(made)))
                if slot is not None:
                    slot = (*slot[:2], type(made))
            else:
                slot = where.get((type(made), made)) if _is_slot(made) else None
            if slot is None:
                if made != real or type(made) is not type(real):
                    return _NOT_PREPARED
                sources.append(_constant(made))
                continue
            source = _value(*slot)
            expected = source(values)
            if expected != real or type(expected) is not type(real):
                return _NOT_PREPARED
            if isinstance(real, list) and [type(v) for v in expected] != [type(v) for v in real]:
                return _NOT_PREPARED
            sources.append(source)
        return _Template(template_qs, compiler, sql, sources)


@functools.cache
def _arrays_bound() -> bool:
    """Whether the database sends an `in_list` as one array (its vendor: fixed per process).

    The default database's: the project has one (`DATABASE_URL`). A builder reading another
    alias of another vendor would still answer right, never prepared: its list would reach
    the parameters value by value where the shape expects one array (or the other way round),
    and `_prepare`'s check refuses a parameter that is not exactly a value of the call."""
    return binds_lists_as_arrays(connections[DEFAULT_DB_ALIAS])


def _constant(value):
    return lambda values: value


def _value(name: str, index: int | None, adapt):
    def get(values):
        return values[name] if index is None else values[name][index]

    if adapt is None:
        return get
    return lambda values: adapt(get(values))
