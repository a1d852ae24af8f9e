"""Request rate limits per API key and per user, counted in the shared cache (every node)."""

from __future__ import annotations

import hashlib

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Every request carrying an API key counts against that key."""

    scope = "api_key"

    def get_cache_key(self, request, view):
        raw = request.headers.get(settings.API_KEY_HEADER, "").strip()
        if not raw:
            return None  # the authentication answers 401 first
        digest = hashlib.sha256(raw.encode()).hexdigest()[:32]
        return self.cache_format % {"scope": self.scope, "ident": digest}


class UserRateThrottle(SimpleRateThrottle):
    """Every authenticated request counts against its user, whatever key it came with."""

    scope = "user"

    def get_cache_key(self, request, view):
        if not request.user or not request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}
