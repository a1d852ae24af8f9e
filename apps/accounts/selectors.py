"""Reads for authentication."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from apps.accounts.models import ApiKey, hash_api_key


def api_key_is_active(raw_key: str) -> bool:
    """Whether `raw_key` names an active API key, read from the database every time.

    Not cached: a key deleted or revoked anywhere (admin, queryset, psql) must stop working on
    every node at once (contract section 13). The lookup is one unique-index probe.
    """
    return ApiKey.objects.filter(key_hash=hash_api_key(raw_key), revoked_at__isnull=True).exists()


def active_user_password(*, user_id: int) -> str | None:
    """The password hash of the active user `user_id`; None when it is gone or inactive.

    Read from the database every time, as the key is: the refresh route compares the token's
    password digest with it (apps.accounts.tokens), so a password changed or a user deactivated
    anywhere refuses the user's refresh tokens on every node at once."""
    return (
        get_user_model()
        .objects.filter(pk=user_id, is_active=True)
        .values_list("password", flat=True)
        .first()
    )
