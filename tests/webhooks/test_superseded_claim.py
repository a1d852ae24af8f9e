"""An attempt that outlives its lease records nothing: the delivery was claimed again (another
attempt counted), and the claim that followed it decides the row (docs/webhooks.md, "How it
runs"). A worker stalled between sending and recording (a GC pause, a slow database, a
swapped-out process) must not write its late answer over the newer claim's."""

from __future__ import annotations

import datetime as dt
import logging
import threading

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.events.services import event_emit
from apps.webhooks.delivery import (
    Outcome,
    deliveries_claim,
    deliveries_release,
    outcomes_record,
)
from apps.webhooks.models import Webhook, WebhookDelivery
from apps.webhooks.relay import Relay
from tests.webhooks.test_webhooks import subscribe

pytestmark = pytest.mark.django_db


@pytest.fixture
def private_ok(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True


@pytest.fixture
def queued(api, agency, private_ok):
    """One subscription (never called: outcomes are given, not sent) and `n` pending deliveries."""

    def make(n: int = 1) -> list[int]:
        subscribe(api, "http://127.0.0.1:9/hook")
        for k in range(n):
            event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={"n": k})
        return list(WebhookDelivery.objects.order_by("pk").values_list("pk", flat=True))

    return make


def lapse() -> None:
    """Every lease ends, as when an attempt outlives it."""
    WebhookDelivery.objects.update(locked_until=timezone.now() - dt.timedelta(seconds=1))


def claim(delivery_id: int):
    (job,) = deliveries_claim(limit=1, delivery_id=delivery_id)
    return job


def answered(job, code: int, text: str = "") -> Outcome:
    return Outcome(job, code, "", text, 5)


def test_a_late_failure_does_not_undo_the_delivery_of_the_claim_that_followed(queued):
    (pk,) = queued()
    first = claim(pk)
    lapse()
    second = claim(pk)
    assert outcomes_record([answered(second, 200, "second")]) == ["delivered"]
    assert outcomes_record([answered(first, 500, "first, late")]) == ["superseded"]
    row = WebhookDelivery.objects.get(pk=pk)
    assert (row.status, row.attempts, row.response_status, row.response_body) == (
        "delivered",
        2,
        200,
        "second",
    )
    assert row.next_attempt_at is None  # no third send scheduled
    assert deliveries_claim(limit=10) == []


def test_a_late_delivery_does_not_cancel_the_retry_of_the_claim_that_followed(queued):
    (pk,) = queued()
    first = claim(pk)
    lapse()
    second = claim(pk)
    assert outcomes_record([answered(second, 503, "second")]) == ["retry"]
    retry = WebhookDelivery.objects.get(pk=pk)
    assert outcomes_record([answered(first, 200, "first, late")]) == ["superseded"]
    row = WebhookDelivery.objects.get(pk=pk)
    assert (row.status, row.attempts, row.response_status, row.response_body) == (
        "pending",
        2,
        503,
        "second",
    )
    assert row.next_attempt_at == retry.next_attempt_at and row.locked_until is None


def test_a_late_answer_leaves_the_newer_claim_in_flight_and_its_answer_is_kept(queued):
    """In a batch: the late one is left out of the batch's one update, the others written."""
    pk, other = queued(2)
    first = claim(pk)
    lapse()
    second = claim(pk)
    mate = claim(other)
    with CaptureQueriesContext(connection) as queries:
        results = outcomes_record([answered(first, 200, "ok"), answered(mate, 200, "ok")])
    assert results == ["superseded", "delivered"]
    assert len(queries) == 2  # the batch's one update, and which of it applied
    row = WebhookDelivery.objects.get(pk=pk)
    assert (row.status, row.attempts, row.response_status) == ("pending", 2, None)
    assert row.locked_until > timezone.now()  # still the second claim's
    assert WebhookDelivery.objects.get(pk=other).status == "delivered"
    assert outcomes_record([answered(second, 200, "second")]) == ["delivered"]
    assert WebhookDelivery.objects.get(pk=pk).response_body == "second"


def test_a_batch_of_current_claims_is_still_one_update(queued):
    ids = queued(3)
    jobs = deliveries_claim(limit=10)
    assert sorted(j.id for j in jobs) == ids
    with CaptureQueriesContext(connection) as queries:
        assert outcomes_record([answered(j, 204) for j in jobs]) == ["delivered"] * 3
    assert len(queries) == 1


def test_a_late_410_neither_fails_the_delivery_nor_pauses_the_subscription(queued):
    (pk,) = queued()
    first = claim(pk)
    lapse()
    claim(pk)
    assert outcomes_record([answered(first, 410)]) == ["superseded"]
    assert WebhookDelivery.objects.get(pk=pk).status == "pending"
    assert Webhook.objects.get().active is True


def test_giving_back_a_superseded_claim_leaves_the_newer_one_alone(queued):
    (pk,) = queued()
    first = claim(pk)
    lapse()
    claim(pk)
    deliveries_release([first])
    row = WebhookDelivery.objects.get(pk=pk)
    assert row.attempts == 2 and row.locked_until > timezone.now()


def test_the_relay_counts_and_logs_a_superseded_outcome(queued, caplog):
    (pk,) = queued()
    first = claim(pk)
    lapse()
    claim(pk)
    relay = Relay(threads=1, stop=threading.Event())
    relay.inflight = 1
    relay.held.add(pk)
    relay.done.put(answered(first, 200))
    relay.sending[first.webhook_id] += 1
    with caplog.at_level(logging.INFO, logger="apps.webhooks.relay"):
        relay._record(0)
    relay.pool.shutdown()
    assert relay.superseded == 1 and relay.inflight == 0
    assert [r.getMessage() for r in caplog.records if "outlived" in r.getMessage()] == [
        f"delivery {pk}: attempt 1 outlived its lease; the claim that followed records it"
    ]
