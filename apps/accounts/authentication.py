"""The `apiKey` header and the bearer JWT, checked together on every /v1 route."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework_simplejwt.authentication import JWTAuthentication

from apps.accounts.selectors import api_key_is_active

API_KEY_CHALLENGE = 'ApiKey realm="api", header="apiKey"'


def check_api_key(request) -> None:
    if not settings.API_KEY_REQUIRED:
        return
    raw = request.headers.get(settings.API_KEY_HEADER, "").strip()
    if not raw:
        raise AuthenticationFailed("The apiKey header is missing.", code="api_key_missing")
    if len(raw) > 512 or not api_key_is_active(raw):
        raise AuthenticationFailed("The apiKey is not valid.", code="api_key_invalid")


class ApiKeyAuthentication(BaseAuthentication):
    """Only the API key: the token routes, where no bearer token exists yet."""

    def authenticate(self, request):
        check_api_key(request)
        return None

    def authenticate_header(self, request) -> str:
        return API_KEY_CHALLENGE


class ApiKeyBearerAuthentication(JWTAuthentication):
    """The API key first, then the bearer access token."""

    def authenticate(self, request):
        check_api_key(request)
        return super().authenticate(request)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "apps.accounts.authentication.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "apiKey"}


class ApiKeyBearerScheme(OpenApiAuthenticationExtension):
    """Both schemes in one requirement: the operation needs the key AND the token.

    The token routes declare `apiKey` alone through extend_schema(auth=...).
    """

    target_class = "apps.accounts.authentication.ApiKeyBearerAuthentication"
    name = ["apiKey", "bearerAuth"]

    def get_security_definition(self, auto_schema):
        return [
            {"type": "apiKey", "in": "header", "name": "apiKey"},
            {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
        ]
