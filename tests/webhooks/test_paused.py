"""A paused subscription (`"active": false`, or deactivated by a 410) holds its deliveries:
nothing is sent, no attempt is counted, the last answer stays in the log; re-activated, they
resume within their 72-hour window. Sending to it on demand (redeliver, ping) answers 409
instead of a 202 that would send nothing (docs/webhooks.md, "Pausing a subscription")."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.events.models import Event
from apps.webhooks.delivery import delivery_attempt
from apps.webhooks.models import WebhookDelivery
from tests.conftest import assert_problem
from tests.webhooks.receiver import Receiver
from tests.webhooks.test_webhooks import run_due, subscribe

pytestmark = pytest.mark.django_db


@pytest.fixture
def private_ok(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True


def log(api, hook) -> list[tuple[str, int, int | None]]:
    response = api.get(f"/v1/webhooks/{hook['id']}/deliveries")
    assert response.status_code == 200, response.content
    return [(d["status"], d["attempts"], d["responseStatus"]) for d in response.json()["results"]]


def set_active(api, hook, active: bool) -> None:
    response = api.put(f"/v1/webhooks/{hook['id']}", {"active": active}, format="json")
    assert response.status_code == 200, response.content


def retrying(api, receiver, carrier) -> dict:
    """A subscription whose first delivery failed (the receiver's answer) and waits to retry."""
    hook = subscribe(api, receiver.url)
    receiver.secret = hook["secret"]
    api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
    assert run_due() == ["retry"]
    return hook


def all_due() -> None:
    WebhookDelivery.objects.update(next_attempt_at=timezone.now())


def test_pausing_holds_pending_retries_and_reactivating_resumes_them(api, carrier, private_ok):
    with Receiver(answer=503) as receiver:
        hook = retrying(api, receiver, carrier)
        set_active(api, hook, False)
        all_due()
        assert run_due() == [None]  # held: not claimed, not sent
        assert log(api, hook) == [("pending", 1, 503)]
        assert len(receiver.received) == 1
        receiver.answer = 204
        set_active(api, hook, True)
        assert run_due() == ["delivered"]
    assert log(api, hook) == [("delivered", 2, 204)]
    assert len(receiver.unique_ids()) == 1


def test_a_pause_that_outlives_the_retry_window_fails_them_unsent(api, carrier, private_ok):
    with Receiver(answer=503) as receiver:
        hook = retrying(api, receiver, carrier)
        set_active(api, hook, False)
        WebhookDelivery.objects.update(created_at=timezone.now() - dt.timedelta(hours=73))
        set_active(api, hook, True)
        all_due()
        assert run_due() == []
    assert log(api, hook) == [("failed", 1, 503)]
    assert len(receiver.headers) == 1  # the attempt before the pause, and no other


def test_redeliver_and_ping_of_a_paused_subscription_answer_409(api, carrier, private_ok):
    with Receiver(answer=503) as receiver:
        hook = retrying(api, receiver, carrier)
        set_active(api, hook, False)
        delivery = WebhookDelivery.objects.get()
        redeliver = api.post(f"/v1/webhooks/{hook['id']}/deliveries/{delivery.id}/redeliver")
        assert "paused" in assert_problem(redeliver, 409)["detail"]
        ping = api.post(f"/v1/webhooks/{hook['id']}/ping")
        assert "paused" in assert_problem(ping, 409)["detail"]
        all_due()
        assert run_due() == [None]
        assert log(api, hook) == [("pending", 1, 503)]
        assert not Event.objects.filter(type="webhook.ping").exists()
        assert len(receiver.headers) == 1


def test_a_subscription_deactivated_by_410_is_paused_the_same_way(api, carrier, private_ok):
    with Receiver(answer=410) as receiver:
        hook = subscribe(api, receiver.url)
        receiver.secret = hook["secret"]
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "B"}, format="json")
        first, second = WebhookDelivery.objects.order_by("id")
        assert [delivery_attempt(delivery_id=d.pk) for d in (first, second)] == ["failed", None]
        assert sorted(log(api, hook)) == [("failed", 1, 410), ("pending", 0, None)]
        assert_problem(api.post(f"/v1/webhooks/{hook['id']}/ping"), 409)
        receiver.answer = 204
        set_active(api, hook, True)
        assert run_due() == ["delivered"]
    assert sorted(log(api, hook)) == [("delivered", 1, 204), ("failed", 1, 410)]
