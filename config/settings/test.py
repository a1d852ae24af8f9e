"""Test settings: fast hashing, debug off so errors look as in production."""

from .base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# The caller read on every request unless a test keeps it (tests/accounts/test_principal*.py).
PRINCIPAL_CACHE_SECONDS = 0
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # In memory, as Django's default; named, so pytest-xdist's workers (the engine is
    # django_prometheus's, which pytest-django does not know for SQLite) leave it alone.
    DATABASES["default"].setdefault("TEST", {})["NAME"] = ":memory:"  # noqa: F405
