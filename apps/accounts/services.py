"""Writes for API keys."""

from __future__ import annotations

import secrets

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import ApiKey, hash_api_key
from apps.core.services import model_update


@transaction.atomic
def api_key_create(*, name: str, raw_key: str | None = None, user=None) -> tuple[ApiKey, str]:
    """Create a key and return it with its raw value, which is never stored. Its name is
    required: one of spaces only is none."""
    raw_key = raw_key or secrets.token_urlsafe(32)
    key = ApiKey(
        name=name.strip(), prefix=raw_key[:8], key_hash=hash_api_key(raw_key), created_by=user
    )
    key.full_clean()
    key.save()
    return key, raw_key


@transaction.atomic
def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    """Revoke a key; every node refuses it on its next request (read live, or from the shared
    cache under a generation this save moves: apps.accounts.principal)."""
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


@transaction.atomic
def api_key_update(*, api_key: ApiKey, name: str) -> ApiKey:
    """Rename a key; its value, prefix and hash never change."""
    key = ApiKey.objects.select_for_update().get(pk=api_key.pk)
    model_update(instance=key, fields=("name",), data={"name": name})
    return key


@transaction.atomic
def api_key_delete(*, api_key: ApiKey) -> None:
    """Delete a key; every node refuses it on its next request (read live, or from the shared
    cache under a generation this delete moves: apps.accounts.principal)."""
    api_key.delete()
