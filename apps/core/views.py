"""Liveness and readiness probes: no credentials, plain JSON."""

from __future__ import annotations

from django.core.files.storage import default_storage
from django.db import connection
from django.http import HttpRequest, JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive and answering."""
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    """The database and document storage are reachable."""
    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception:  # any failure means not ready; the reason is in the log
        checks["database"] = "unavailable"
    try:
        default_storage.exists("readyz-probe")
        checks["storage"] = "ok"
    except Exception:
        checks["storage"] = "unavailable"
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503
    )
