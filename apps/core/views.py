"""Liveness and readiness probes: no credentials, plain JSON."""

from __future__ import annotations

import os

from django.core.files.storage import default_storage
from django.db import connection
from django.http import HttpRequest, JsonResponse


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


def readyz(request: HttpRequest) -> JsonResponse:
    """The database and document storage are reachable."""
    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception:  # any failure means not ready; the reason is in the log
        checks["database"] = "unavailable"
    checks["storage"] = "ok" if storage_reachable() else "unavailable"
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503
    )
