"""Back-office pages of subscriptions, deliveries and events: scoped by agency."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.core.models import IdempotencyRecord
from apps.events.services import event_emit
from apps.webhooks.models import Webhook, WebhookDelivery
from tests.admin.formdata import form_data

pytestmark = pytest.mark.django_db


def test_admin_pages_are_scoped(client, staff, agency, other_agency, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    mine = Webhook.objects.create(agency=agency, url="http://127.0.0.1/mine", secret="whsec_x")
    theirs = Webhook.objects.create(
        agency=other_agency, url="http://127.0.0.1/theirs", secret="whsec_y"
    )
    ours = event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={"n": 1})
    other = event_emit(type="client.deleted", agency_id=other_agency.id, client_id=None, data={})
    client.force_login(staff)
    page = client.get("/admin/webhooks/webhook/").content.decode()
    assert "/mine" in page and "/theirs" not in page
    assert client.get(f"/admin/webhooks/webhook/{theirs.pk}/change/").status_code == 302
    assert client.get(f"/admin/webhooks/webhook/{mine.pk}/change/").status_code == 200
    deliveries = client.get("/admin/webhooks/webhookdelivery/")
    assert deliveries.status_code == 200
    assert WebhookDelivery.objects.filter(webhook=mine).count() == 1
    page = deliveries.content.decode()
    assert f"evt_{WebhookDelivery.objects.get(webhook=mine).event_id}" in page
    assert f"evt_{WebhookDelivery.objects.get(webhook=theirs).event_id}" not in page
    events = client.get("/admin/events/event/").content.decode()
    assert f"/admin/events/event/{ours.pk}/change/" in events
    assert f"/admin/events/event/{other.pk}/change/" not in events
    assert client.get(f"/admin/events/event/{other.pk}/change/").status_code == 302


def test_admin_create_goes_through_the_service(client, staff, agency, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    client.force_login(staff)
    url = "/admin/webhooks/webhook/add/"
    refused = client.post(
        url,
        form_data(
            client.get(url).content.decode(),
            agency=str(agency.pk),
            url="http://169.254.169.254/x",
            event_types="[]",
            client_ids="[]",
        ),
    )
    assert refused.status_code == 200 and not Webhook.objects.exists()  # SSRF guard
    made = client.post(
        url,
        form_data(
            client.get(url).content.decode(),
            agency=str(agency.pk),
            url="https://93.184.216.34/hook",
            event_types='["policy.created"]',
            client_ids="[]",
        ),
        follow=True,
    )
    webhook = Webhook.objects.get()
    assert webhook.secret.startswith("whsec_") and webhook.secret in made.content.decode()


def test_the_delivery_log_and_idempotency_records_cannot_be_deleted_from_the_admin(
    client, admin_user, agency, settings
):
    # Read-only records: not even a superuser deletes a delivery or a stored answer.
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    Webhook.objects.create(agency=agency, url="http://127.0.0.1/mine", secret="whsec_x")
    event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={"n": 1})
    delivery = WebhookDelivery.objects.get()
    record = IdempotencyRecord.objects.create(
        user=admin_user,
        method="POST",
        path="/v1/documents/clients",
        key="k-1",
        request_hash="0" * 64,
        response_status=201,
        expires_at=timezone.now() + dt.timedelta(days=1),
    )
    client.force_login(admin_user)
    for changelist, pk in (
        ("/admin/webhooks/webhookdelivery/", delivery.pk),
        ("/admin/core/idempotencyrecord/", record.pk),
    ):
        assert client.get(f"{changelist}{pk}/change/").status_code == 200
        assert client.get(f"{changelist}{pk}/delete/").status_code == 403
        assert client.post(f"{changelist}{pk}/delete/", {"post": "yes"}).status_code == 403
        assert 'value="delete_selected"' not in client.get(changelist).content.decode()
    assert WebhookDelivery.objects.filter(pk=delivery.pk).exists()
    assert IdempotencyRecord.objects.filter(pk=record.pk).exists()
