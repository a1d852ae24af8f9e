"""`in_list`'s values sent as one typed array (apps.core.lookups.as_array, dumped by
apps.core.postgresql): any string or bigint comes back as itself, and a list of anything else
is left to psycopg's own list dumper (issue 18)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import DataError, connection

from apps.clients.models import Client
from apps.core.lookups import IntArray, TextArray, as_array
from tests.factories import ClientFactory

BIGINT = 2**63 - 1
# What the array text must quote or escape: nothing, the word NULL, spaces, the delimiter,
# braces, double quotes, backslashes, other scripts' spaces and letters.
AWKWARD = ["", "NULL", "null", " padded ", "a,b", "{x}", 'say "hi"', "back\\slash", "\t", "\u3000"]
AWKWARD += ["é ü", '\\"', "}", '"']

on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")


def test_ints_and_strings_become_typed_arrays_and_the_rest_stays_a_list():
    assert type(as_array([3, 1, 2])) is IntArray and as_array([3, 1, 2]) == [3, 1, 2]
    assert type(as_array(["b", "a"])) is TextArray and as_array(["b", "a"]) == ["b", "a"]
    assert type(as_array([-BIGINT - 1, BIGINT])) is IntArray
    for values in ([BIGINT + 1, 1], [-BIGINT - 2], [True, False], [1, "1"], [dt.date(2026, 1, 1)]):
        assert type(as_array(values)) is list and as_array(values) == values


@on_postgresql
@pytest.mark.django_db
def test_every_string_and_bigint_comes_back_from_the_server_as_itself():
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s, pg_typeof(%s)::text", [TextArray(AWKWARD), TextArray(["a"])])
        assert cursor.fetchone() == (AWKWARD, "text[]")
        # Without a quote or a backslash the values are joined as they are (no replace).
        plain = [v for v in AWKWARD if '"' not in v and "\\" not in v]
        assert len(plain) == len(AWKWARD) - 4
        cursor.execute("SELECT %s", [TextArray(plain)])
        assert cursor.fetchone() == (plain,)
        ints = IntArray([-BIGINT - 1, -1, 0, 7, 40_000, BIGINT])
        cursor.execute("SELECT %s, pg_typeof(%s)::text", [ints, ints])
        assert cursor.fetchone() == (list(ints), "bigint[]")
        cursor.execute("SELECT cardinality(%s), cardinality(%s)", [TextArray(), IntArray()])
        assert cursor.fetchone() == (0, 0)


@on_postgresql
@pytest.mark.django_db
def test_a_string_with_a_nul_is_refused_as_psycopg_refuses_a_list_of_it():
    for values in (["a", "b\x00c"], TextArray(["a", "b\x00c"])):
        with pytest.raises(DataError, match="NUL"), connection.cursor() as cursor:
            cursor.execute("SELECT %s", [values])


@pytest.mark.django_db
def test_in_list_finds_awkward_strings_and_only_them():
    clients = [ClientFactory(client_name=name or "-") for name in AWKWARD]
    names = [client.client_name for client in clients]
    found = Client.objects.filter(client_name__in_list=[*names, "nobody", "NULL "]).order_by("id")
    assert list(found) == clients
    one = Client.objects.filter(client_name__in_list=['say "hi"', "a,b"]).order_by("id")
    assert list(one) == [clients[4], clients[6]]
