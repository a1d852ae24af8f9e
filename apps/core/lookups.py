"""`field__in_list=[...]`: `IN` whose SQL does not grow with the list, on PostgreSQL.

`field__in=[a, b, c]` compiles to `IN (%s, %s, %s)`: a statement per length, one parameter per
value. For verification's 200 DOTs or a batch's 1,000 VINs that is a statement compiled again
for every length (apps.core.prepared keeps at most a few lengths), and a query text too long
for psycopg's cache of parsed statements, split again on every call (issue 18). On PostgreSQL
this lookup is `field = ANY(%s)` with the values as one array parameter (`field = %s` for one
value): the same statement for any length above one, so one prepared shape serves them all.
On SQLite it is `IN`, unchanged, up to `LONG_LIST` values; a longer list of integers or of
strings is one JSON parameter, `field IN (SELECT value FROM json_each(%s))`, so a client's
whole fleet (a status watch, the calendar) never meets SQLite's limit on a statement's
parameters (32,766 in most builds, 250,000 in Debian's). Either way: the rows whose value is one
of the list's, none for an empty list.

A list of integers or of strings is sent as an `IntArray` or a `TextArray`, whose dumpers
(apps.core.postgresql) write the array's text at once with its type known (`bigint[]`,
`text[]`): psycopg's own list dumper looks at every value to choose a type (the smallest
integer type that holds the largest) and then dumps and checks each value for quoting, about
0.13 ms for each of 200 DOTs' three lists (issue 18). Any other list is sent as a list.
"""

from __future__ import annotations

import json

from django.core.exceptions import EmptyResultSet
from django.db.models import Field, ForeignObject
from django.db.models.lookups import In


class IntArray(list):
    """Integers sent as one `bigint[]` parameter (apps.core.postgresql dumps it)."""


class TextArray(list):
    """Strings sent as one `text[]` parameter (apps.core.postgresql dumps it)."""


def as_array(values: list) -> list:
    """The values as the array parameter that sends them: an `IntArray` of ints, a `TextArray`
    of strings, else a list for psycopg's own dumper (bools, dates, a mix, integers past
    `bigint`, which it sends as `numeric[]`)."""
    kinds = set(map(type, values))
    if kinds == {int} and min(values) >= -(2**63) and max(values) < 2**63:
        return IntArray(values)
    if kinds == {str}:
        return TextArray(values)
    return list(values)


def binds_lists_as_arrays(connection) -> bool:
    """Whether `in_list` sends its values as one array parameter on this connection."""
    return connection.vendor == "postgresql"


LONG_LIST = 999  # Django's own bound for SQLite (`max_query_params`): a batch of 1,000 VINs
# is one JSON parameter, a page of ids stays `IN`.


class InList(In):
    lookup_name = "in_list"

    def as_sqlite(self, compiler, connection):
        if not self.rhs_is_direct_value():
            return super().as_sql(compiler, connection)
        values = [value for value in self.rhs if value is not None]
        if len(values) <= LONG_LIST:
            return super().as_sql(compiler, connection)
        lhs, lhs_params = self.process_lhs(compiler, connection)
        _sqls, params = self.batch_process_rhs(compiler, connection, values)
        if not isinstance(as_array(list(params)), IntArray | TextArray):
            return super().as_sql(compiler, connection)  # Decimals, bools, a mix: kept as IN
        return f"{lhs} IN (SELECT value FROM json_each(%s))", (*lhs_params, json.dumps(params))

    def as_postgresql(self, compiler, connection):
        if not self.rhs_is_direct_value():
            return super().as_sql(compiler, connection)
        values = [value for value in self.rhs if value is not None]
        if not values:
            raise EmptyResultSet
        lhs, lhs_params = self.process_lhs(compiler, connection)
        _sqls, params = self.batch_process_rhs(compiler, connection, values)
        if len(params) == 1:  # one value (one DOT, one VIN): no array to build and send
            return f"{lhs} = %s", (*lhs_params, *params)
        return f"{lhs} = ANY(%s)", (*lhs_params, as_array(params))


# Related fields keep lookups of their own (`client_id__in_list` is the foreign key's).
for field_class in (Field, ForeignObject):
    field_class.register_lookup(InList)
