"""Operations: the landing page, friendly pages outside /v1, request ids, /metrics, /readyz."""

from __future__ import annotations

import logging
import re

import pytest
from django.utils import timezone

from apps.core.request_id import RequestIdFilter
from tests.conftest import API_KEY, bearer_for


def test_landing_page_says_what_the_service_is_and_where_to_go(client):
    response = client.get("/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "Insurance verification and fleet management" in page
    for href in ('href="/v1/docs"', 'href="/v1/schema"', 'href="/admin/"'):
        assert href in page
    assert "docs/api.md" in page
    # Demo credentials only where the demo runs (make run / make dev), never in production.
    assert "demo-password" not in page


def test_landing_page_shows_the_demo_credentials_in_demo_mode(client, settings):
    settings.DEMO_MODE = True
    page = client.get("/").content.decode()
    assert "demo-api-key" in page and "demo-password" in page


def test_unknown_page_outside_v1_is_a_friendly_page_not_a_debug_page(client):
    response = client.get("/no/such/page")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "Page not found" in page and 'href="/"' in page
    assert "URLconf" not in page and "urlpatterns" not in page


def test_unknown_page_under_v1_stays_problem_json(client):
    response = client.get("/v1/no-such-thing")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_admin_view_site_link_goes_to_the_landing_page(admin_client):
    page = admin_client.get("/admin/").content.decode()
    assert re.search(r'<a href="/">\s*View site', page)


# --- request id ----------------------------------------------------------------------------


def test_a_sane_request_id_is_echoed(client):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="edge-7f3a:2.b_c")
    assert response["X-Request-ID"] == "edge-7f3a:2.b_c"


@pytest.mark.parametrize("given", [None, "", "has spaces", "x" * 129, "new\nline", "<script>"])
def test_a_missing_or_odd_request_id_is_replaced_by_a_new_one(client, given):
    headers = {} if given is None else {"HTTP_X_REQUEST_ID": given}
    first = client.get("/healthz", **headers)["X-Request-ID"]
    second = client.get("/healthz", **headers)["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", first) and first != second


def test_errors_under_v1_carry_the_request_id(client):
    response = client.get("/v1/clients", HTTP_X_REQUEST_ID="trace-401")
    assert response.status_code == 401
    assert response["X-Request-ID"] == "trace-401"


def test_every_log_line_of_a_request_carries_its_id(client):
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record)

    handler = Keep()
    handler.addFilter(RequestIdFilter())
    logger = logging.getLogger("apps.access")
    logger.addHandler(handler)
    try:
        client.get("/v1/clients", HTTP_X_REQUEST_ID="log-me-1")
    finally:
        logger.removeHandler(handler)
    access = [r for r in seen if r.getMessage().startswith("GET /v1/clients")]
    assert access and access[0].request_id == "log-me-1"
    assert access[0].status == 401 and access[0].path == "/v1/clients"
    # Outside a request, the filter says so rather than reusing an old id.
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "outside", None, None)
    RequestIdFilter().filter(record)
    assert record.request_id == "-"


# --- /metrics ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_metrics_from_an_internal_address_without_a_token(client, settings):
    settings.METRICS_TOKEN = ""
    client.get("/healthz")
    response = client.get("/metrics")
    assert response.status_code == 200
    text = response.content.decode()
    assert 'django_http_responses_total_by_status_view_method_total{method="GET",' in text
    assert "django_http_requests_latency_seconds_by_view_method_bucket" in text
    assert "django_db_execute_total" in text
    assert 'tasks_queue_depth{queue="webhooks"}' in text


@pytest.mark.django_db
def test_metrics_refused_to_outside_clients_without_a_token(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 403
    # Behind nginx the peer is loopback: the forwarded client address decides.
    forwarded = client.get("/metrics", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert forwarded.status_code == 403
    settings.METRICS_ALLOW_INTERNAL = False
    assert client.get("/metrics").status_code == 403


@pytest.mark.django_db
def test_metrics_with_a_token_need_it_from_everywhere(client, settings):
    settings.METRICS_TOKEN = "s3cret-metrics-token"
    refused = client.get("/metrics")
    assert refused.status_code == 401 and refused["WWW-Authenticate"].startswith("Bearer")
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope")
    assert wrong.status_code == 401
    ok = client.get(
        "/metrics", HTTP_AUTHORIZATION="Bearer s3cret-metrics-token", REMOTE_ADDR="203.0.113.9"
    )
    assert ok.status_code == 200 and b"tasks_queue_depth" in ok.content


@pytest.mark.django_db
@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer  "])
def test_metrics_take_the_bearer_scheme_in_any_case_as_v1_does(client, settings, scheme):
    settings.METRICS_TOKEN = "s3cret-metrics-token"
    ok = client.get("/metrics", HTTP_AUTHORIZATION=f"{scheme} s3cret-metrics-token")
    assert ok.status_code == 200
    wrong = client.get("/metrics", HTTP_AUTHORIZATION=f"{scheme} s3cret-metrics-tokem")
    assert wrong.status_code == 401
    for other in ("Basic s3cret-metrics-token", "s3cret-metrics-token", "Bearer"):
        assert client.get("/metrics", HTTP_AUTHORIZATION=other).status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize("between", ["\t", " \t ", "\t\t"])
def test_metrics_and_v1_read_a_bearer_header_alike(client, make_api, manager, settings, between):
    # One reading (apps.core.bearer.bearer_token): the token after whitespace of any kind.
    settings.METRICS_TOKEN = "s3cret-metrics-token"
    api = make_api()
    api.credentials(HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION=f"Bearer{between}{bearer_for(manager)}")
    assert api.get("/v1/me").status_code == 200
    ok = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer{between}s3cret-metrics-token")
    assert ok.status_code == 200
    for other in (f"Bearer{between}s3cret-metrics-token{between}x", f"Basic{between}s3cret"):
        assert client.get("/metrics", HTTP_AUTHORIZATION=other).status_code == 401


@pytest.mark.django_db
def test_metrics_count_waiting_tasks_and_the_oldest_ones_age(client, settings):
    from django_tasks_db.models import DBTaskResult

    settings.METRICS_TOKEN = ""
    for _ in range(3):
        DBTaskResult.objects.create(
            task_path="apps.nowhere.task",
            args_kwargs={"args": [], "kwargs": {}},
            queue_name="webhooks",
            backend_name="default",
            run_after=timezone.now(),
        )
    DBTaskResult.objects.filter(queue_name="webhooks").update(
        enqueued_at=timezone.now() - timezone.timedelta(seconds=120)
    )
    text = client.get("/metrics").content.decode()
    assert 'tasks_queue_depth{queue="webhooks"} 3.0' in text
    assert 'tasks_queue_depth{queue="default"} 0.0' in text
    age = float(re.search(r'tasks_queue_oldest_age_seconds\{queue="webhooks"\} (\S+)', text)[1])
    assert 119 <= age < 200


# --- /readyz -------------------------------------------------------------------------------


@pytest.fixture
def worker_alive(db):
    from apps.events.worker import heartbeat

    heartbeat(worker_id="test-worker")


def test_readyz_covers_database_storage_cache_and_the_worker(client, worker_alive):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "storage": "ok", "cache": "ok", "worker": "ok"},
    }


@pytest.mark.django_db
def test_readyz_is_503_when_no_worker_ever_beat(client):
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["worker"] == "missing"


def test_readyz_is_503_when_the_workers_heartbeat_is_stale(client, settings, worker_alive):
    from apps.events.models import WorkerHeartbeat

    settings.WORKER_HEARTBEAT_MAX_AGE = 60
    WorkerHeartbeat.objects.update(beat_at=timezone.now() - timezone.timedelta(seconds=61))
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["worker"] == "stale"


def test_readyz_is_503_when_the_cache_loses_values(client, settings, worker_alive):
    # A cache that takes values and gives nothing back (Django resets its caches on change).
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["cache"] == "unavailable"


def test_metrics_count_webhook_deliveries_by_status(client, settings, agency):
    from apps.events.models import Event
    from apps.webhooks.models import Webhook, WebhookDelivery

    settings.METRICS_TOKEN = ""
    webhook = Webhook.objects.create(agency=agency, url="https://hooks.example.com/x", secret="s")
    for index, status in enumerate(["delivered", "delivered", "failed", "pending", "delivered"]):
        event = Event.objects.create(type=f"client.updated.{index}", agency=agency)
        WebhookDelivery.objects.create(webhook=webhook, event=event, status=status)
    text = client.get("/metrics").content.decode()
    assert 'webhook_deliveries{status="delivered"} 3.0' in text
    assert 'webhook_deliveries{status="failed"} 1.0' in text
    assert 'webhook_deliveries{status="pending"} 1.0' in text
