"""Reads for authentication."""

from __future__ import annotations

from django.core.cache import cache

from apps.accounts.models import ApiKey, hash_api_key
from apps.accounts.services import CACHE_PREFIX

# A valid key is remembered briefly so verification loops skip a query; revocation
# deletes the entry, so the window only matters if the cache itself is lost.
API_KEY_CACHE_SECONDS = 60


def api_key_is_active(raw_key: str) -> bool:
    """Whether `raw_key` names an active API key."""
    digest = hash_api_key(raw_key)
    cached = cache.get(CACHE_PREFIX + digest)
    if cached is not None:
        return cached
    active = ApiKey.objects.filter(key_hash=digest, revoked_at__isnull=True).exists()
    cache.set(CACHE_PREFIX + digest, active, API_KEY_CACHE_SECONDS)
    return active
