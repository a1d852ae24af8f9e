"""A subscription's host is resolved within a deadline of its own: the system resolver has
none, and a host whose name server never answers must neither hold a POST /v1/webhooks nor a
relay thread past the attempt's timeout (and its lease). A lookup that times out is a 400 on
the URL at creation, and a failed attempt, retried, at delivery (docs/webhooks.md)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from apps.events.services import event_emit
from apps.webhooks import delivery
from apps.webhooks.delivery import delivery_attempt
from apps.webhooks.models import WebhookDelivery
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

# Far past every deadline below; the lookup then fails, so without a deadline of our own the
# test still ends (on the wrong answer).
HANG_SECONDS = 20.0


@pytest.fixture
def resolver(monkeypatch):
    """`hang` names hosts whose lookup does not answer (until the test ends); any other name
    resolves to a public address (never called: these tests only resolve)."""
    hung: set[str] = set()
    released = threading.Event()
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):
        if host in hung:
            released.wait(HANG_SECONDS)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        if host.endswith(".hooks.test"):
            host = "93.184.216.34"
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    yield hung
    released.set()


def test_a_host_that_never_resolves_is_a_400_without_waiting_for_it(api, resolver, monkeypatch):
    monkeypatch.setattr(delivery, "RESOLVE_SECONDS", 1.0)
    resolver.add("silent.hooks.test")
    started = time.monotonic()
    refused = api.post("/v1/webhooks", {"url": "https://silent.hooks.test/x"}, format="json")
    elapsed = time.monotonic() - started
    body = assert_problem(refused, 400)
    assert [(e["field"], e["message"]) for e in body["errors"]] == [
        ("url", "The host silent.hooks.test did not resolve within 1 s.")
    ], body
    assert elapsed < HANG_SECONDS / 2


def test_an_attempt_whose_lookup_does_not_answer_ends_at_its_timeout_and_is_retried(
    api, agency, resolver, monkeypatch
):
    created = api.post("/v1/webhooks", {"url": "https://mute.hooks.test/x"}, format="json")
    assert created.status_code == 201, created.content
    resolver.add("mute.hooks.test")  # its name server stops answering
    monkeypatch.setattr(delivery, "TIMEOUT_SECONDS", 1.0)
    event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
    started = time.monotonic()
    result = delivery_attempt(delivery_id=WebhookDelivery.objects.get().pk)
    elapsed = time.monotonic() - started
    assert result == "retry"
    row = WebhookDelivery.objects.get()
    assert (row.status, row.attempts, row.response_status) == ("pending", 1, None)
    assert row.error == "The host mute.hooks.test did not resolve within 1 s."
    assert row.locked_until is None and row.next_attempt_at is not None
    assert elapsed < HANG_SECONDS / 2


def test_a_host_that_answers_is_unchanged(api, resolver):
    created = api.post("/v1/webhooks", {"url": "https://prompt.hooks.test/x"}, format="json")
    assert created.status_code == 201, created.content
    gone = api.post("/v1/webhooks", {"url": "https://gone.invalid/x"}, format="json")
    assert [(e["field"], e["message"]) for e in assert_problem(gone, 400)["errors"]] == [
        ("url", "The host gone.invalid does not resolve.")
    ]
