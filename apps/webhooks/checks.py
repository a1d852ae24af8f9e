"""System checks of the webhooks app's settings."""

from __future__ import annotations

from django.conf import settings
from django.core import checks

from apps.webhooks.delivery import SHORTEST_LEASE_SECONDS, TIMEOUT_SECONDS


@checks.register()
def lease_outlasts_an_attempt(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """A lease no longer than an attempt would let a second worker send a delivery the first
    is still sending."""
    if settings.WEBHOOK_LEASE_SECONDS < SHORTEST_LEASE_SECONDS:
        return [
            checks.Error(
                f"WEBHOOK_LEASE_SECONDS is {settings.WEBHOOK_LEASE_SECONDS}.",
                hint=f"A worker must hold a delivery well past an attempt's "
                f"{TIMEOUT_SECONDS:.0f} s: set at least {SHORTEST_LEASE_SECONDS:.0f}.",
                id="webhooks.E001",
            )
        ]
    return []
