"""WEBHOOK_LEASE_SECONDS: how long a claimed delivery is held (a worker killed mid-attempt
leaves it to another once it lapses); the system checks refuse one an attempt could outlive."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.utils import timezone

from apps.webhooks.delivery import deliveries_claim
from apps.webhooks.models import WebhookDelivery
from tests.webhooks.test_superseded_claim import private_ok, queued  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("seconds", [60, 20, 300])
def test_a_claim_holds_the_delivery_for_the_lease(settings, queued, seconds):  # noqa: F811
    settings.WEBHOOK_LEASE_SECONDS = seconds
    (delivery_id,) = queued()
    before = timezone.now()
    (job,) = deliveries_claim(limit=1, delivery_id=delivery_id)
    after = timezone.now()
    held = WebhookDelivery.objects.get(pk=delivery_id).locked_until
    assert before + dt.timedelta(seconds=seconds) <= held <= after + dt.timedelta(seconds=seconds)
    # Held: no other claim takes it until the lease lapses.
    assert deliveries_claim(limit=1, delivery_id=delivery_id) == []


@pytest.mark.parametrize("seconds", [0, 10, 19])
def test_a_lease_an_attempt_could_outlive_is_refused_by_the_checks(settings, seconds):
    settings.WEBHOOK_LEASE_SECONDS = seconds
    with pytest.raises(SystemCheckError, match=r"webhooks\.E001"):
        call_command("check")


def test_a_lease_of_twice_the_attempt_passes_the_checks(settings):
    settings.WEBHOOK_LEASE_SECONDS = 20
    call_command("check")
