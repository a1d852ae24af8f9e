"""API keys: the credential an integrator's system presents in the `apiKey` header."""

from __future__ import annotations

import hashlib

from django.db import models

from apps.core.models import user_stamp


def hash_api_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


class ApiKey(models.Model):
    """An integrator's API key; only its SHA-256 is stored."""

    name = models.CharField(max_length=120)
    prefix = models.CharField(max_length=12, help_text="First characters, to recognise a key.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = user_stamp()
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name", "id"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class PermissionsVersion(models.Model):
    """One row whose `version` changes with every change to a permission set.

    Database triggers (migration 0002, PostgreSQL and SQLite) give it a new random value on
    any insert, update, delete or truncate of users' groups, users' and groups' permissions,
    groups, permissions and content types, whoever makes it: Django, the admin, raw SQL or
    psql. The caller's statement reads it with the user (apps.accounts.principal), so a
    permission set remembered under another version is never used (contract section 13).
    A random value, not a counter: a version seen inside a transaction that was then rolled
    back is never given again.
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    version = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "permissions version"

    def __str__(self) -> str:
        return f"permissions version {self.version}"
