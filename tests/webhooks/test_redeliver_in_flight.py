"""A redelivery or the end of a pause never takes a delivery from the attempt under way: a
redelivery of a delivery being sent answers 409 (with Retry-After) rather than a second send
at the same moment, and the outcome of an attempt that outlived its hold never erases a
redelivery asked since (docs/webhooks.md, "Retries" and "Pausing a subscription"). An attempt
in flight is simulated by a claim (`deliveries_claim`) whose outcome is recorded later."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.events.services import event_emit
from apps.webhooks.delivery import deliveries_claim, outcomes_record
from apps.webhooks.models import WebhookDelivery
from tests.conftest import assert_problem
from tests.webhooks.test_superseded_claim import answered, claim, lapse
from tests.webhooks.test_webhooks import subscribe

pytestmark = pytest.mark.django_db


@pytest.fixture
def pending(api, agency, settings) -> tuple[dict, int]:
    """A subscription (never called: outcomes are given, not sent) and one pending delivery."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    hook = subscribe(api, "http://127.0.0.1:9/hook")
    event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
    return hook, WebhookDelivery.objects.get().pk


def redeliver(api, hook: dict, pk: int):
    return api.post(f"/v1/webhooks/{hook['id']}/deliveries/{pk}/redeliver")


def set_active(api, hook: dict, active: bool) -> None:
    response = api.put(f"/v1/webhooks/{hook['id']}", {"active": active}, format="json")
    assert response.status_code == 200, response.content


def log(api, hook: dict) -> list[tuple[str, int, int | None]]:
    response = api.get(f"/v1/webhooks/{hook['id']}/deliveries")
    assert response.status_code == 200, response.content
    return [(d["status"], d["attempts"], d["responseStatus"]) for d in response.json()["results"]]


def test_redelivering_a_delivery_being_sent_is_409_and_sends_it_once(api, pending):
    hook, pk = pending
    first = claim(pk)  # its attempt is under way

    refused = redeliver(api, hook, pk)
    body = assert_problem(refused, 409)
    assert "being sent now" in body["detail"], body
    assert 1 <= int(refused["Retry-After"]) <= 10
    assert deliveries_claim(limit=10) == []  # nobody sends it beside the attempt under way

    assert outcomes_record([answered(first, 503)]) == ["retry"]
    assert log(api, hook) == [("pending", 1, 503)]
    again = redeliver(api, hook, pk)  # the attempt ended: accepted, and due at once
    assert again.status_code == 202, again.content
    (second,) = deliveries_claim(limit=10)
    assert (second.id, second.attempts) == (pk, 2)


def test_a_late_answer_does_not_erase_a_redelivery_asked_since(api, pending):
    hook, pk = pending
    stalled = claim(pk)
    lapse()  # the attempt outlived its hold (a stalled worker): redelivering is accepted
    assert redeliver(api, hook, pk).status_code == 202

    assert outcomes_record([answered(stalled, 200, "late")]) == ["superseded"]
    assert log(api, hook) == [("pending", 1, None)]
    (again,) = deliveries_claim(limit=10)  # the redelivery is still due
    assert (again.id, again.attempts) == (pk, 2)
    assert outcomes_record([answered(again, 204)]) == ["delivered"]
    assert log(api, hook) == [("delivered", 2, 204)]


def test_the_end_of_a_pause_leaves_a_delivery_being_sent_to_its_attempt(api, pending):
    hook, pk = pending
    WebhookDelivery.objects.update(created_at=timezone.now() - dt.timedelta(hours=73))
    first = claim(pk)  # a late last retry, claimed before the pause
    set_active(api, hook, False)
    set_active(api, hook, True)

    assert log(api, hook) == [("pending", 1, None)]  # still its attempt's, not failed unsent
    assert_problem(redeliver(api, hook, pk), 409)
    assert deliveries_claim(limit=10) == []
    # Its answer decides, and the window has passed: no retry.
    assert outcomes_record([answered(first, 503)]) == ["failed"]
    assert log(api, hook) == [("failed", 1, 503)]
    assert deliveries_claim(limit=10) == []


def test_the_end_of_a_pause_fails_a_delivery_whose_attempt_outlived_its_hold(api, pending):
    hook, pk = pending
    stalled = claim(pk)
    set_active(api, hook, False)
    WebhookDelivery.objects.update(created_at=timezone.now() - dt.timedelta(hours=73))
    lapse()
    set_active(api, hook, True)
    assert log(api, hook) == [("failed", 1, None)]

    assert outcomes_record([answered(stalled, 200)]) == ["superseded"]
    assert WebhookDelivery.objects.get().error == (
        "The retry window ended while the subscription was paused."
    )
    assert redeliver(api, hook, pk).status_code == 202  # the operator may still send it
