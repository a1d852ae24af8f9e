"""Page/limit paging with the response envelope of contract section 7."""

from __future__ import annotations

import copy
import functools
import math
from collections import OrderedDict

from django.db import connections
from django.db.models import F, Func, OrderBy, QuerySet, prefetch_related_objects
from rest_framework.pagination import BasePagination
from rest_framework.response import Response

from apps.core import counting
from apps.core.memo import BoundedMemo
from apps.core.params import parse_positive_int
from apps.core.prepared import PreparedQuery, joins_in_written_order, server_prepared
from apps.core.sorting import reversed_term

DEFAULT_LIMIT = 25
MAX_LIMIT = 200
MAX_PAGE = 10_000_000


# A page of a caller of several agencies is read one agency at a time (`_ids_per_agency`) when
# the agencies' parts hand the union at most this many ids (two agencies: a page within 10,000
# rows of either end of the list).
PER_AGENCY_ROWS = 20_000


def page_rows(queryset: QuerySet, offset: int, limit: int, total: int) -> list:
    """A page by deferred join: the ids first, then only those rows with every relation the
    representation needs. Pages past the middle are read from the other end of the order, so
    the last page costs what the first does."""
    if queryset.ordered and offset + limit > total // 2:
        reverse_offset = total - offset - limit
        take = limit + min(0, reverse_offset)
        ids = _ids(queryset, max(0, reverse_offset), take, backwards=True)
        ids.reverse()
    else:
        ids = _ids(queryset, offset, limit)
    return rows_in_order(queryset, ids)


def rows_in_order(queryset: QuerySet, ids: list) -> list:
    """The rows of `queryset` with these ids, in their order (one that went meanwhile is left
    out), each with every relation the list reads: by one statement per model and list shape
    (`_rows_by_key`), planned with its joins in written order."""
    if not ids:
        return []
    connection = connections[queryset.db]
    with joins_in_written_order(connection):
        with server_prepared(connection):
            rows = _rows_by_key(queryset, ids)
        if rows is None:
            rows = queryset.order_by().filter(pk__in=ids)
        by_pk = {row.pk: row for row in rows}
    return [by_pk[pk] for pk in ids if pk in by_pk]


# The rows' statement of each model, database and set of relations a list reads, compiled once
# per process (apps.core.prepared): compiling its joins was a tenth of a list page's Python.
_ROWS_BY_KEY: BoundedMemo[tuple, PreparedQuery] = BoundedMemo(64)


def _frozen(related):
    """`Query.select_related` (True, False or nested dicts of names) as a key."""
    if isinstance(related, dict):
        return tuple(sorted((name, _frozen(inner)) for name, inner in related.items()))
    return related


def _rows_statement(model, db: str, related, *, agencies: list, ids: list) -> QuerySet:
    rows = model._default_manager.using(db).for_agencies(agencies)
    rows = rows.filter(pk__in_list=ids).order_by()
    rows.query.select_related = copy.deepcopy(related)
    return rows


def _rows_by_key(queryset: QuerySet, ids: list) -> list | None:
    """The page's rows selected by primary key and the caller's agencies alone, with the list's
    relations, then its prefetches: one text for every page of every list of the model, so it
    is compiled once per process (`PreparedQuery`) and prepared on the server and planned once
    per connection (the rows' joins cost PostgreSQL 1.2 ms of planning a page against 0.5 ms of
    execution: issue 18). The list's other filters are left out, so
    its generic plan, made without the values, always reads the primary key: the ids come
    from the list itself, and the agencies keep another agency's record out even if one moved
    between the two statements. None (the list's own statement, planned each time) for a
    queryset the rows could not be rebuilt from: annotated, `extra()`, deferred or `only()`
    columns, distinct or combined, values, or not scoped by `for_agencies` to known agencies (a
    superuser's lists, whose rows are read as before)."""
    query = queryset.query
    manager = queryset.model._default_manager
    if (
        query.annotations
        or query.extra
        or query.extra_select
        or query.deferred_loading != (frozenset(), True)
        or query.distinct
        or query.combinator
        or query.values_select
        or queryset._fields is not None
        or not hasattr(manager, "for_agencies")
        or getattr(queryset, "agency_ids", None) is None
    ):
        return None
    key = (queryset.model, queryset.db, _frozen(query.select_related))
    statement = _ROWS_BY_KEY.get(key)
    if statement is None:
        related = copy.deepcopy(query.select_related)
        build = functools.partial(_rows_statement, queryset.model, queryset.db, related)
        statement = PreparedQuery(build, arrays=("ids",))
        _ROWS_BY_KEY.remember(key, statement)
    rows = statement.fetch(agencies=list(dict.fromkeys(queryset.agency_ids)), ids=list(ids))
    if rows and queryset._prefetch_related_lookups:
        prefetch_related_objects(rows, *queryset._prefetch_related_lookups)
    return rows


def _ids(queryset: QuerySet, offset: int, count: int, *, backwards: bool = False) -> list:
    """The ids of a page, in the list's order (its reverse when `backwards`)."""
    ids = ids_per_agency(queryset, offset, count, backwards=backwards)
    if ids is None:
        ordered = queryset.reverse() if backwards else queryset
        return list(ordered.values_list("pk", flat=True)[offset : offset + count])
    return ids


def ids_per_agency(
    queryset: QuerySet, offset: int, count: int, *, backwards: bool = False
) -> list | None:
    """The ids of a page of a caller of several agencies, read one agency at a time
    (`_ids_per_agency`), in the list's order (its reverse when `backwards`); None when the
    page is better read at once (`_per_agency`). The API's lists and the admin's changelists
    (apps.core.admin.CountedPaginator) page through it."""
    plan = _per_agency(queryset, offset + count)
    if plan is None:
        return None
    terms, agencies = plan
    if backwards:
        terms = [reversed_term(term) for term in terms]
    return _ids_per_agency(queryset.order_by(*terms), terms, agencies, offset, count)


def _ids_per_agency(
    queryset: QuerySet, terms: list, agencies: list[int], offset: int, count: int
) -> list:
    """A caller of several agencies filters `agency IN (a, b…)`, and an index (agency, column,
    id) gives the order of one agency's records, not of several: PostgreSQL sorted all of the
    agencies' records for a page (the big agency's 302,100 units: 65 ms for page 1). Each
    agency's first `offset + count` ids in order, through its index, then the page of their
    union in the same order: one statement, 2.6 ms. A term that is an expression of the
    record's columns (a name ignoring case, `apps.core.sorting.SortKey`) is selected by each
    part under a name of its own, by which the union is ordered."""
    keys, named = [], {}
    for n, term in enumerate(terms):
        if isinstance(term, str):
            keys.append(term)
        else:
            named[f"sort_key_{n}"] = term.expression
            keys.append(("-" if term.descending else "") + f"sort_key_{n}")
    columns = [key.lstrip("-") for key in keys]
    field = queryset.agency_field
    parts = [
        queryset.filter(**{field: agency})
        .annotate(**named)
        .values_list("pk", *columns)[: offset + count]
        for agency in agencies
    ]
    union = parts[0].union(*parts[1:], all=True).order_by(*keys)
    return [row[0] for row in union[offset : offset + count]]


def _per_agency(queryset: QuerySet, depth: int) -> tuple[list, list[int]] | None:
    """The list's order terms and its distinct agencies when its page is read per agency
    (`_ids_per_agency`); None when it is read at once: one agency (or every one), a page deep
    in the list (each agency would give up to `depth` ids, `PER_AGENCY_ROWS` in all), an order
    that is not the model's own columns or functions of them (a relation's, an annotation's),
    an unordered or empty queryset, or a database that cannot order and slice the parts of a
    UNION (SQLite)."""
    agencies = list(dict.fromkeys(getattr(queryset, "agency_ids", None) or ()))
    if len(agencies) < 2 or len(agencies) * depth > PER_AGENCY_ROWS or not queryset.ordered:
        return None
    query = queryset.query
    if "__" in queryset.agency_field or query.distinct or query.combinator or query.extra_order_by:
        return None
    if (
        query.is_empty()
        or not connections[queryset.db].features.supports_slicing_ordering_in_compound
    ):
        return None
    terms = list(query.order_by) or (
        list(queryset.model._meta.ordering) if query.default_ordering else []
    )
    if not terms or not query.standard_ordering:
        return None
    names = set()
    for term in terms:
        if isinstance(term, OrderBy) and not (term.nulls_first or term.nulls_last):
            # A function of the record's own columns (`LOWER(client_name)`), checked below.
            expression = term.expression
            nodes = [expression] if isinstance(expression, F) else list(expression.flatten())
            if not all(isinstance(node, F | Func) for node in nodes):
                return None
            names.update(node.name for node in nodes if isinstance(node, F))
        elif not isinstance(term, str) or term.lstrip("-") in ("?", ""):
            return None
        else:
            names.add(term.lstrip("-"))
    if any("__" in name for name in names):
        return None
    # A column of the model's own: a foreign key by its attname (`client_id`), since its name
    # (`client`) would order by the related model's ordering, through a join.
    fields = queryset.model._meta.concrete_fields
    columns = {f.attname for f in fields} | {f.name for f in fields if not f.is_relation}
    if not names <= columns | {"pk"} or query.annotations.keys() & names:
        return None
    return terms, agencies


class Page:
    """One page of a list: its rows and the numbers that describe it."""

    def __init__(self, queryset: QuerySet, *, page: int, limit: int):
        self.page = page
        self.limit = limit
        self.count = counting.count(queryset)
        offset = (page - 1) * limit
        self.rows = page_rows(queryset, offset, limit, self.count) if offset < self.count else []

    @property
    def total_pages(self) -> int:
        return math.ceil(self.count / self.limit) if self.count else 0


class PagePagination(BasePagination):
    """`page` (1-based) and `limit` (default 25, at most 200)."""

    page_query_param = "page"
    limit_query_param = "limit"

    def paginate_queryset(self, queryset, request, view=None):
        page = parse_positive_int(
            request.query_params.get("page"), field="page", default=1, maximum=MAX_PAGE
        )
        limit = parse_positive_int(
            request.query_params.get("limit"),
            field="limit",
            default=DEFAULT_LIMIT,
            maximum=MAX_LIMIT,
        )
        self.current = Page(queryset, page=page, limit=limit)
        return self.current.rows

    def get_paginated_response(self, data):
        page = self.current
        return Response(
            OrderedDict(
                count=page.count,
                page=page.page,
                limit=page.limit,
                total_pages=page.total_pages,
                results=data,
            )
        )

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["count", "page", "limit", "totalPages", "results"],
            "properties": {
                "count": {"type": "integer"},
                "page": {"type": "integer"},
                "limit": {"type": "integer"},
                "totalPages": {"type": "integer"},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": "page",
                "required": False,
                "in": "query",
                "description": "1-based page number.",
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
            },
            {
                "name": "limit",
                "required": False,
                "in": "query",
                "description": f"Page size (default {DEFAULT_LIMIT}, at most {MAX_LIMIT}).",
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
            },
        ]
