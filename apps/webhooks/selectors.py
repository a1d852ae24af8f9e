"""Reads of webhooks and deliveries; agency scoping is applied here, once."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.webhooks.models import Webhook, WebhookDelivery


def webhook_queryset(*, user) -> QuerySet[Webhook]:
    """Every subscription of the agencies the user may act for."""
    return Webhook.objects.for_user(user)


def delivery_queryset(*, user, webhook: Webhook) -> QuerySet[WebhookDelivery]:
    """A subscription's deliveries, newest first."""
    return (
        WebhookDelivery.objects.for_user(user)
        .filter(webhook=webhook)
        .select_related("event")
        .order_by("-id")
    )
