"""The list-count version moves at once on every write and once more when the write's
transaction commits: one commit INCR per transaction, however many rows it writes (an import
of N rows did 2N INCRs), and still one when a savepoint that queued it was rolled back."""

from __future__ import annotations

import pytest
from django.db import transaction

from apps.core import counting
from tests.factories import ClientFactory

pytestmark = pytest.mark.django_db


class Rollback(Exception):
    pass


@pytest.fixture
def incrs(settings, monkeypatch):
    """The INCRs of the version, counted instead of sent."""
    settings.LIST_COUNT_CACHE_SECONDS = 30
    calls = []
    monkeypatch.setattr(counting, "_incr", lambda: calls.append(1))
    return calls


def commit_bumps(callbacks) -> int:
    return sum(isinstance(callback, counting._CommitBump) for callback in callbacks)


def test_a_transaction_of_many_writes_bumps_once_at_commit(
    agency, incrs, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        for _ in range(5):
            with transaction.atomic():  # a service per row: a savepoint each, released
                ClientFactory(agency=agency)
        at_once = len(incrs)
    assert at_once >= 5  # each write, at once (its history row too)
    assert commit_bumps(callbacks) == 1
    assert len(incrs) == at_once + 1


def test_a_rolled_back_savepoint_does_not_take_the_commit_bump_with_it(
    agency, incrs, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        with pytest.raises(Rollback), transaction.atomic():
            ClientFactory(agency=agency)  # queues the bump in the savepoint...
            raise Rollback  # ...which Django discards with it
        ClientFactory(agency=agency)  # the committed write queues its own
        at_once = len(incrs)
    assert commit_bumps(callbacks) == 1
    assert len(incrs) == at_once + 1

    # The next transaction queues its own (the last one ran).
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        ClientFactory(agency=agency)
    assert commit_bumps(callbacks) == 1
