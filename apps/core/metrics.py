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
from collections.abc import Callable, Iterator

from django.conf import settings
from django.db.models import Count, Min
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from apps.core.bearer import bearer_token

logger = logging.getLogger(__name__)


# Scrape-time gauges of the apps above core (webhook deliveries, registered by apps.webhooks
# in its AppConfig.ready): (name, labels, a function yielding the family). core imports no
# domain app, so they come to it.
SCRAPE_FAMILIES: list[tuple[str, list[str], Callable[[], Iterator[GaugeMetricFamily]]]] = []


def scrape_family_register(
    name: str, labels: list[str], collect: Callable[[], Iterator[GaugeMetricFamily]]
) -> None:
    """Add a gauge family read from the database at each scrape (once per name)."""
    if all(existing != name for existing, _, _ in SCRAPE_FAMILIES):
        SCRAPE_FAMILIES.append((name, labels, collect))


class DatabaseStateCollector:
    """Counts rows at scrape time: queued tasks and their age, webhook deliveries by status."""

    def describe(self):
        """The families' names, without touching the database (registration calls this)."""
        yield GaugeMetricFamily("tasks_queue_depth", "", labels=["queue"])
        yield GaugeMetricFamily("tasks_queue_oldest_age_seconds", "", labels=["queue"])
        for name, labels, _ in SCRAPE_FAMILIES:
            yield GaugeMetricFamily(name, "", labels=labels)

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
        for name, _, collect in SCRAPE_FAMILIES:
            try:
                yield from collect()
            except Exception:  # a scrape must answer even when the database does not
                logger.warning("%s metrics unavailable", name, exc_info=True)


def _queues() -> list[str]:
    return list(settings.TASKS.get("default", {}).get("QUEUES", ["default"]))


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
        given = bearer_token(request.headers.get("Authorization", ""))
        return bool(given) and hmac.compare_digest(given, token.encode())
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
