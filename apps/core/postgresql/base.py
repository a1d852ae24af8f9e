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
"""

from __future__ import annotations

import select

from django_prometheus.db.backends.postgresql import base as instrumented


def _has_input(connection) -> bool:
    """Whether the server sent anything (or closed) since the last answer was read."""
    try:
        poller = select.poll()
        poller.register(connection.pgconn.socket, select.POLLIN)
        return bool(poller.poll(0))
    except Exception:  # closed or broken connection: let Django's check decide
        return True


class DatabaseWrapper(instrumented.DatabaseWrapper):
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
