"""A request whose process died holds its Idempotency-Key no longer (contract section 11: 409
only "while the first is still running"; a first request that failed is not stored). The
topology probe killed a node's workers during an upload: the key answered 409 "still in
progress" for 24 hours. On PostgreSQL a running request holds the key's advisory lock on its
connection, which its death frees at once; elsewhere an unfinished claim older than
CLAIM_LEASE is abandoned."""

from __future__ import annotations

import contextlib
import datetime as dt

import pytest
from django.db import connection
from django.utils import timezone

from apps.core import idempotency
from apps.core.models import IdempotencyRecord
from apps.documents.models import Document
from tests.conftest import assert_problem
from tests.documents.test_api import upload

pytestmark = pytest.mark.django_db


def died(key: str, *, ago: dt.timedelta) -> IdempotencyRecord:
    """The claim a first request left when its process died `ago` (no answer stored)."""
    record = IdempotencyRecord.objects.get(key=key)
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        response_status=None,
        response_body=None,
        response_headers=None,
        created_at=timezone.now() - ago,
    )
    Document.objects.all().delete()  # as if its write had never committed
    return record


@contextlib.contextmanager
def running_elsewhere(record: IdempotencyRecord):
    """The first request still running in another process: on PostgreSQL it holds the key's
    advisory lock on a connection of its own."""
    if connection.vendor != "postgresql":
        yield
        return
    import psycopg

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    lock_id = idempotency._lock_id(record.user, record.method, record.path, record.key)
    with psycopg.connect(**params, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [lock_id])
        yield


def test_the_key_of_a_request_that_died_is_taken_by_the_retry(api, carrier):
    upload(api, carrier, key="died")
    died("died", ago=idempotency.CLAIM_LEASE + dt.timedelta(seconds=1))

    response = upload(api, carrier, key="died")

    assert response.status_code == 201, response.content
    assert not response.has_header("Idempotent-Replayed")
    assert Document.objects.count() == 1
    replay = upload(api, carrier, key="died")
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json()["id"] == response.json()["id"]
    assert Document.objects.count() == 1


def test_the_key_of_a_request_still_running_is_409(api, carrier):
    upload(api, carrier, key="running")
    record = died("running", ago=dt.timedelta(seconds=1))

    with running_elsewhere(record):
        assert_problem(upload(api, carrier, key="running"), 409)
    assert Document.objects.count() == 0


@pytest.mark.skipif(connection.vendor != "postgresql", reason="advisory locks: PostgreSQL")
def test_on_postgresql_a_dead_request_frees_its_key_at_once(api, carrier):
    upload(api, carrier, key="just-died")
    died("just-died", ago=dt.timedelta(seconds=1))  # well inside the lease

    assert upload(api, carrier, key="just-died").status_code == 201
    assert Document.objects.count() == 1


def test_other_content_under_a_dead_requests_key_is_still_422(api, carrier):
    upload(api, carrier, key="died-422", description="first")
    died("died-422", ago=idempotency.CLAIM_LEASE + dt.timedelta(seconds=1))

    assert_problem(upload(api, carrier, key="died-422", description="other"), 422)
    assert Document.objects.count() == 0
