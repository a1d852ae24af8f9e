"""Reads for authentication."""

from __future__ import annotations

from apps.accounts.models import ApiKey, hash_api_key


def api_key_is_active(raw_key: str) -> bool:
    """Whether `raw_key` names an active API key, read from the database every time.

    Not cached: a key deleted or revoked anywhere (admin, queryset, psql) must stop working on
    every node at once (contract section 13). The lookup is one unique-index probe.
    """
    return ApiKey.objects.filter(key_hash=hash_api_key(raw_key), revoked_at__isnull=True).exists()
