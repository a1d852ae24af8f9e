"""System checks of the accounts app's settings."""

from __future__ import annotations

from django.conf import settings
from django.core import checks

# Back-ends whose entries live in one process's memory: a caller kept there would not be
# retired by a change another process makes (contract section 13: at once on every node).
PROCESS_LOCAL_CACHES = {
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
}


@checks.register(checks.Tags.security)
def principal_cache_is_shared(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    backend = settings.CACHES["default"]["BACKEND"]
    if settings.PRINCIPAL_CACHE_SECONDS > 0 and backend in PROCESS_LOCAL_CACHES:
        return [
            checks.Error(
                f"PRINCIPAL_CACHE_SECONDS is {settings.PRINCIPAL_CACHE_SECONDS} with {backend}.",
                hint="Keep callers only in a cache every node shares (CACHE_URL=redis://…), "
                "or set PRINCIPAL_CACHE_SECONDS=0 to read them on every request.",
                id="accounts.E001",
            )
        ]
    return []
