"""django-prometheus's database metrics with their children bound once (apps.core.db_metrics,
issue 18): the same series and values in /metrics, and no labels() lookup per statement."""

from __future__ import annotations

import threading
from unittest import mock

import pytest
from django.db import DatabaseError, connection
from django_prometheus.db import errors_total, execute_many_total, execute_total
from django_prometheus.db import query_duration_seconds as duration

from apps.core.db_metrics import cursor_wrapper

pytestmark = pytest.mark.django_db

# executemany takes writes only: one that changes no row.
_TOUCH = "UPDATE django_content_type SET model = model WHERE id = %s"


def _samples() -> dict[str, float]:
    # Read from the children: collecting the registry would run the queue-depth collector's SQL.
    labels = ("default", connection.vendor)
    timed = duration.labels(*labels)
    return {
        "executed": execute_total.labels(*labels)._value.get(),
        "many": execute_many_total.labels(*labels)._value.get(),
        "timed": sum(bucket.get() for bucket in timed._buckets),
        "errors": sum(  # of every type
            child._value.get()
            for values, child in errors_total._metrics.items()
            if values[:2] == labels
        ),
    }


def test_statements_are_counted_and_timed_without_a_lookup_each():
    with connection.cursor() as cursor:  # the children are bound on the first statement
        cursor.execute("SELECT 1")
        cursor.executemany(_TOUCH, [(0,)])
    before = _samples()
    refuse = mock.Mock(side_effect=AssertionError("labels() looked up per statement"))
    with (
        mock.patch.object(execute_total, "labels", refuse),
        mock.patch.object(execute_many_total, "labels", refuse),
        mock.patch.object(duration, "labels", refuse),
        connection.cursor() as cursor,
    ):
        for _ in range(5):
            cursor.execute("SELECT 1")
        cursor.executemany(_TOUCH, [(0,), (-1,), (-2,)])
    after = _samples()
    assert after["executed"] - before["executed"] == 5 + 3
    assert after["many"] - before["many"] == 3
    assert after["timed"] - before["timed"] == 5 + 1
    assert after["errors"] == before["errors"]


def test_a_failed_statement_is_counted_timed_and_its_error_counted_by_type():
    before = _samples()
    with pytest.raises(DatabaseError) as raised, connection.cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table_at_all")
    after = _samples()
    # Counted under the driver's own exception (SQLite's OperationalError, psycopg's
    # UndefinedTable), the one Django's DatabaseError is raised from.
    kind = type(raised.value.__cause__).__name__
    assert after["executed"] - before["executed"] == 1
    assert after["timed"] - before["timed"] == 1
    assert after["errors"] - before["errors"] == 1
    assert ("default", connection.vendor, kind) in errors_total._metrics


def test_the_database_series_are_in_metrics(client, settings):
    settings.METRICS_TOKEN = ""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    text = client.get("/metrics").content.decode()
    labels = f'alias="default",vendor="{connection.vendor}"'
    assert f"django_db_execute_total{{{labels}}}" in text
    assert f"django_db_query_duration_seconds_count{{{labels}}}" in text
    assert 'django_db_query_duration_seconds_bucket{alias="default",le="0.01",vendor=' in text


def test_a_thread_that_finds_the_class_bound_never_meets_it_half_bound():
    # The first statement's thread is held inside the binding, at the duration's child; the
    # class's attributes say bound (the counter's child was set first) and a second thread's
    # statement ran, then observed its duration on None: AttributeError, a 500 at a process's
    # start. Deterministic where 16 threads and a tiny switch interval failed 115 runs of 200.
    class Cursor:  # a class of its own: cursor_wrapper makes one wrapper per class
        def execute(self, sql, params=None):
            return sql

    wrapper = cursor_wrapper(Cursor, "race", "test")
    inside, resume = threading.Event(), threading.Event()
    first_call = threading.Lock()
    labels = duration.labels

    def slow_labels(*args):
        if first_call.acquire(blocking=False):  # only the first thread's binding waits
            inside.set()
            resume.wait(timeout=2)
        return labels(*args)

    errors = []

    def run():
        try:
            wrapper().execute("SELECT 1")
        except Exception as error:  # what the second thread met
            errors.append(error)

    with mock.patch.object(duration, "labels", slow_labels):
        binding = threading.Thread(target=run)
        binding.start()
        assert inside.wait(timeout=2)
        second = threading.Thread(target=run)
        second.start()
        second.join(timeout=1)  # with a lock it waits for the first: the timeout lets it on
        resume.set()
        binding.join()
        second.join()
    assert errors == []
    assert wrapper._metric_timed is duration.labels("race", "test")
