"""Prometheus metrics at /metrics: django-prometheus's request and database metrics, plus
gauges read from the database at scrape time (task queue depth and age, webhook deliveries).

Under gunicorn each worker process counts its own requests; with PROMETHEUS_MULTIPROC_DIR set
(`bin/serve` and the systemd units set it) the counters are written to files there and every
scrape adds up all workers, so whichever worker answers, the figures cover the whole node.
The scrape-time gauges come from the database, so they are the same on every node.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os

from django.conf import settings
from django.db.models import Count, Min
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

logger = logging.getLogger(__name__)


class DatabaseStateCollector:
    """Counts rows at scrape time: queued tasks and their age, webhook deliveries by status."""

    def describe(self):
        """The families' names, without touching the database (registration calls this)."""
        yield GaugeMetricFamily("tasks_queue_depth", "", labels=["queue"])
        yield GaugeMetricFamily("tasks_queue_oldest_age_seconds", "", labels=["queue"])
        yield GaugeMetricFamily("webhook_deliveries", "", labels=["status"])

    def collect(self):
        depth = GaugeMetricFamily(
            "tasks_queue_depth", "Tasks waiting to run, by queue", labels=["queue"]
        )
        age = GaugeMetricFamily(
            "tasks_queue_oldest_age_seconds",
            "Age of the oldest task waiting to run, by queue (0 when none waits)",
            labels=["queue"],
        )
        try:
            from django_tasks.base import TaskResultStatus
            from django_tasks_db.models import DBTaskResult

            now = timezone.now()
            waiting = {queue: (0, None) for queue in _queues()}
            rows = (
                DBTaskResult.objects.filter(status=TaskResultStatus.READY)
                .values("queue_name")
                .annotate(n=Count("id"), oldest=Min("enqueued_at"))
            )
            for row in rows:
                waiting[row["queue_name"]] = (row["n"], row["oldest"])
            for queue, (count, oldest) in sorted(waiting.items()):
                depth.add_metric([queue], count)
                age.add_metric([queue], (now - oldest).total_seconds() if oldest else 0)
        except Exception:  # a scrape must answer even when the database does not
            logger.warning("task queue metrics unavailable", exc_info=True)
        yield depth
        yield age
        yield from _webhook_deliveries()


def _queues() -> list[str]:
    return list(settings.TASKS.get("default", {}).get("QUEUES", ["default"]))


def _webhook_deliveries():
    """Webhook deliveries by status, when the webhooks app is installed."""
    try:
        from apps.webhooks.models import WebhookDelivery
    except ImportError:
        return
    family = GaugeMetricFamily(
        "webhook_deliveries", "Webhook deliveries by status", labels=["status"]
    )
    try:
        counts = dict(
            WebhookDelivery.objects.values_list("status").annotate(n=Count("pk")).order_by()
        )
    except Exception:
        logger.warning("webhook metrics unavailable", exc_info=True)
        return
    for status in sorted({"pending", "delivered", "failed", *counts}):
        family.add_metric([status], counts.get(status, 0))
    yield family


_COLLECTOR = DatabaseStateCollector()
REGISTRY.register(_COLLECTOR)


# Loopback and the private networks (RFC 1918, IPv6 unique local): where Prometheus runs.
INTERNAL_NETWORKS = [
    ipaddress.ip_network(n)
    for n in ("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
]


def _internal(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip.version == net.version and ip in net for net in INTERNAL_NETWORKS)


def metrics_allowed(request: HttpRequest) -> bool:
    """A bearer METRICS_TOKEN, or (no token configured) a client on an internal address.

    Behind nginx the peer is always loopback, so every address nginx lists in
    X-Forwarded-For must be internal too.
    """
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())
    if not settings.METRICS_ALLOW_INTERNAL:
        return False
    hops = [request.META.get("REMOTE_ADDR", "")]
    hops += [h for h in request.headers.get("X-Forwarded-For", "").split(",") if h.strip()]
    return all(_internal(hop) for hop in hops)


def metrics(request: HttpRequest) -> HttpResponse:
    """The Prometheus exposition, for every worker process of this node."""
    if not metrics_allowed(request):
        response = HttpResponse("Forbidden\n", status=403, content_type="text/plain")
        if settings.METRICS_TOKEN:
            response.status_code = 401
            response.content = b"Unauthorized\n"
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        registry.register(_COLLECTOR)
    else:
        registry = REGISTRY
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
