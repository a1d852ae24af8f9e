"""Persistent PostgreSQL connections are checked without a round trip (apps.core.postgresql).

Runs against PostgreSQL only (`make postgres-test`): SQLite has no server to lose.
"""

from __future__ import annotations

import time

import pytest
from django.db import close_old_connections, connection, connections

from apps.core.postgresql.base import _has_input

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql"
    or bool(connection.settings_dict["OPTIONS"].get("pool"))
    or not connection.settings_dict["CONN_HEALTH_CHECKS"],
    reason="PostgreSQL with persistent connections and CONN_HEALTH_CHECKS (the default)",
)


def _request_query() -> int:
    """What a request does: Django's request_started cleanup, then a query; the backend pid."""
    close_old_connections()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_healthy_connection_costs_no_check_and_a_closed_one_is_replaced(monkeypatch):
    checks = []
    wrapper = type(connections["default"])
    usable = wrapper.is_usable
    monkeypatch.setattr(wrapper, "is_usable", lambda self: checks.append(1) or usable(self))
    pid = _request_query()
    assert [_request_query() for _ in range(3)] == [pid] * 3
    assert checks == []  # no SELECT 1 before each request's first query

    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    deadline = time.monotonic() + 5  # the server's goodbye reaches the socket
    while not _has_input(connection.connection) and time.monotonic() < deadline:
        time.sleep(0.02)

    # The server closed it: the next request gets a new connection, not an error.
    assert _request_query() != pid
    assert checks == [1]
