"""The webhook deliveries gauge of /metrics, read from the database at each scrape."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily

from apps.webhooks.models import WebhookDelivery


def deliveries_family() -> Iterator[GaugeMetricFamily]:
    """Webhook deliveries by status (every status named, 0 when none)."""
    counts = dict(WebhookDelivery.objects.values_list("status").annotate(n=Count("pk")).order_by())
    family = GaugeMetricFamily(
        "webhook_deliveries", "Webhook deliveries by status", labels=["status"]
    )
    for status in sorted({"pending", "delivered", "failed", *counts}):
        family.add_metric([status], counts.get(status, 0))
    yield family
