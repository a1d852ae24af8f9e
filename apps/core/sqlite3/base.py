"""SQLite with django-prometheus's query metrics, its cursor class made once per database.

django-prometheus's SQLite backend builds a new wrapper class for every cursor and looks the
metrics' children up on every statement; apps.core.db_metrics makes the class once and binds
its children once (issue 18). Everything else is django-prometheus's backend.
"""

from __future__ import annotations

from django_prometheus.db.backends.sqlite3 import base as instrumented

from apps.core.db_metrics import cursor_wrapper

DatabaseFeatures = instrumented.DatabaseFeatures


class DatabaseWrapper(instrumented.DatabaseWrapper):
    def create_cursor(self, name=None):
        return self.connection.cursor(
            factory=cursor_wrapper(self.CURSOR_CLASS, self.alias, self.vendor)
        )
