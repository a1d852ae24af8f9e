"""gunicorn settings, loaded by default through ./gunicorn.conf.py (`gunicorn config.wsgi`).

Workers and threads follow the core count (override with WEB_CONCURRENCY and GUNICORN_THREADS);
each thread keeps its own PostgreSQL connection (CONN_MAX_AGE; DATABASE_POOL=1 gives each worker a
psycopg 3 pool instead, see docs/performance.md). In production nginx sits
in front (deploy/nginx.conf): it buffers whole requests and responses, so a slow client holds
an nginx connection, never one of these threads.
"""

import multiprocessing
import os

from gunicorn import glogging

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "2"))
# gthread, leaving each new connection first to a worker with a free thread (config/workers.py).
worker_class = "config.workers.BalancedThreadWorker"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 20
keepalive = 5
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "0"))
max_requests_jitter = max_requests // 10
# Django writes one JSON access line per request, with its request id (apps.core.middleware).
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
errorlog = "-"
# Uploads are streamed to disk by Django's temporary-file handler; keep them off tmpfs-less
# container layers when a directory is given.
worker_tmp_dir = os.environ.get("GUNICORN_WORKER_TMP_DIR") or None
# 500 DOTs as repeated `dots=` parameters need about 7 KB of request line; 8190 is gunicorn's
# ceiling (nginx in front allows 16 KB lines and answers longer ones itself, as problem+json).
limit_request_line = 8190
limit_request_field_size = 8190
limit_request_fields = 100
# Behind nginx on the same host or a private network: trust its X-Forwarded-* headers.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")


# Garbage collection was about a third of a 1,000-unit batch's CPU (docs/performance.md, fifth
# pass): each full collection walks every object Django and the app loaded at start. Once a
# worker has loaded the app, those objects move to the permanent generation (gc.freeze, as the
# gc docs advise for pre-fork servers), and the youngest generation is collected every
# GC_THRESHOLD allocations rather than 700, so an answer's own objects are freed by reference
# counting long before a collection would look at them.
GC_THRESHOLD = int(os.environ.get("GUNICORN_GC_THRESHOLD", "10000"))


def post_worker_init(worker):
    import gc

    _import_what_requests_import()
    gc.collect()
    gc.freeze()
    if GC_THRESHOLD > 0:
        gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])


def _import_what_requests_import():
    """What a worker's first requests would import, imported before it serves them (and frozen
    with the rest): the URLconf with every view, serializer and filter it names, the token
    backend (PyJWT, cryptography) and the cache backend. Lazily, each worker's first /v1
    request paid ~0.3 s of imports, a fifth of a fresh 5-worker gunicorn's CPU in the first
    10 s of load (py-spy, issue 18). Nothing without Django set up (a bare interpreter)."""
    from django.apps import apps

    if not apps.ready:
        return
    import rest_framework_simplejwt.state  # noqa: F401 (the token backend, on first token)
    from django.core.cache import caches
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (imports the URLconf's modules)
    caches["default"]  # imports the cache backend's module


def child_exit(server, worker):
    """Prometheus multiprocess mode: drop a dead worker's live gauges."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


# gunicorn 27's control socket defaults to one path per user, which two nodes on one host
# would fight over; off unless a path is given.
control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET") or "gunicorn.ctl"
control_socket_disable = not os.environ.get("GUNICORN_CONTROL_SOCKET")


class AccessLogWhenAsked(glogging.Logger):
    """gunicorn's logger, writing gunicorn's access line only when GUNICORN_ACCESS_LOG names
    a log: Django writes one per request already (apps.access, with the request id). gunicorn
    turns its own on whenever a logging configuration is given, which the JSON lines below
    are, so every request was logged twice (about a tenth of a /v1/me request's Python: the
    atoms, a second record, its JSON formatting; issue 18)."""

    def _compute_access_log_enabled(self):
        return bool(self.cfg.accesslog)


logger_class = AccessLogWhenAsked

# gunicorn's own lines (start, worker boot and exit, timeouts) as JSON too, like the
# application's; LOG_FORMAT=text keeps gunicorn's plain format.
if os.environ.get("LOG_FORMAT", "json") == "json":
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "json": {
                "()": "pythonjsonlogger.json.JsonFormatter",
                "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
                "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
            }
        },
        # The request id of a request gunicorn refuses itself (config/workers.py), as its
        # answer's X-Request-ID says; "-" on the lines of no request.
        "filters": {"request_id": {"()": "apps.core.request_id.RequestIdFilter"}},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "filters": ["request_id"],
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": ["console"], "propagate": False},
            "gunicorn.access": {"level": "INFO", "handlers": ["console"], "propagate": False},
        },
    }
