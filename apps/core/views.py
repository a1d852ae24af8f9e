"""The landing page, and the liveness and readiness probes (no credentials, plain JSON)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import default_storage
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def landing(request: HttpRequest) -> HttpResponse:
    """What the service is and where to go next: API docs, schema, admin, quick start."""
    return render(request, "landing.html", {"demo": settings.DEMO_MODE or settings.DEBUG})


def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive and answering."""
    return JsonResponse({"status": "ok"})


def storage_reachable() -> bool:
    """Document storage can take files: a writable directory, or an answering bucket."""
    try:
        location = getattr(default_storage, "location", None)
        if location is not None and not hasattr(default_storage, "bucket_name"):
            os.makedirs(location, exist_ok=True)
            return os.path.isdir(location) and os.access(location, os.W_OK)
        default_storage.exists("readyz-probe")
        return True
    except Exception:  # any failure means not ready; the reason is in the log
        return False


def cache_reachable() -> bool:
    """The cache (Redis in production: throttles and login limits) takes and gives a value."""
    key = f"readyz:{uuid.uuid4().hex}"
    try:
        cache.set(key, "1", 5)
        ok = cache.get(key) == "1"
        cache.delete(key)
        return ok
    except Exception:  # any failure means not ready; the reason is in the log
        return False


# Checks of the apps above core (the background worker's heartbeat, registered by
# apps.events in its AppConfig.ready): name -> a function answering "ok" or why not, or None
# when it has nothing to check. core imports no domain app, so they come to it.
READINESS_CHECKS: dict[str, Callable[[], str | None]] = {}


def readiness_check_register(name: str, check: Callable[[], str | None]) -> None:
    """Add a check to /readyz, after the database, storage and cache."""
    READINESS_CHECKS[name] = check


def readyz(request: HttpRequest) -> JsonResponse:
    """The database, document storage, cache and (when there is one) the worker are up."""
    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception:  # any failure means not ready; the reason is in the log
        checks["database"] = "unavailable"
    checks["storage"] = "ok" if storage_reachable() else "unavailable"
    checks["cache"] = "ok" if cache_reachable() else "unavailable"
    for name, check in READINESS_CHECKS.items():
        answer = check()
        if answer is not None:
            checks[name] = answer
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503
    )
