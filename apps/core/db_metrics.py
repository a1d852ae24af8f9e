"""django-prometheus's database metrics, with each series' child looked up once, not per query.

django-prometheus's cursor wrapper calls `labels()` on every statement (the statement counter,
then the duration histogram, each building and sorting a label tuple under a lock): the largest
Python cost a /v1 request pays per SQL statement (issue 18). The labels are the database's
alias and vendor, fixed for a wrapper class, so the children are taken once, on the class's
first statement (a series still first appears in /metrics when it is first counted, as
before). Same metrics, same labels, same values: the statement counted before it runs, its
duration observed whether it succeeds or not, a failure counted by its exception's type.
"""

from __future__ import annotations

from functools import cache
from timeit import default_timer

from django_prometheus.db import errors_total, execute_many_total, execute_total
from django_prometheus.db import query_duration_seconds as duration


@cache
def cursor_wrapper(cursor_class: type, alias: str, vendor: str) -> type:
    """django_prometheus.db.common.ExportingCursorWrapper's class, made once per database."""

    class CursorWrapper(cursor_class):
        _metric_executed = _metric_timed = _metric_many = None

        @classmethod
        def _bind(cls) -> None:
            # `_metric_executed` last: another thread that finds it set goes on without binding
            # and uses `_metric_timed`, which must be there by then (set first, it was None
            # there: AttributeError, a 500 after the statement ran, at a process's start).
            cls._metric_timed = duration.labels(alias, vendor)
            cls._metric_executed = execute_total.labels(alias, vendor)

        def execute(self, *args, **kwargs):
            if self._metric_executed is None:
                self._bind()
            self._metric_executed.inc()
            return self._run(super().execute, args, kwargs)

        def executemany(self, query, param_list, *args, **kwargs):
            if self._metric_executed is None:
                self._bind()
            if self._metric_many is None:
                type(self)._metric_many = execute_many_total.labels(alias, vendor)
            self._metric_executed.inc(len(param_list))
            self._metric_many.inc(len(param_list))
            return self._run(super().executemany, (query, param_list, *args), kwargs)

        def _run(self, statement, args, kwargs):
            started = default_timer()
            try:
                return statement(*args, **kwargs)
            except BaseException as error:
                errors_total.labels(alias, vendor, type(error).__name__).inc()
                raise
            finally:
                self._metric_timed.observe(max(default_timer() - started, 0))

    return CursorWrapper
