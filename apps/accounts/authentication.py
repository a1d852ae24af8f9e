"""The `apiKey` header and the bearer JWT, checked together on every /v1 route."""

from __future__ import annotations

import time

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework_simplejwt.authentication import JWTAuthentication
from rest_framework_simplejwt.exceptions import InvalidToken
from rest_framework_simplejwt.settings import api_settings as jwt_settings

from apps.accounts.models import hash_api_key
from apps.accounts.principal import attach_permissions, caller
from apps.accounts.selectors import api_key_is_active
from apps.accounts.tokens import issued_under
from apps.core.bearer import bearer_token
from apps.core.memo import BoundedMemo
from apps.core.params import MAX_BIGINT, id_or_none

API_KEY_CHALLENGE = 'ApiKey realm="api", header="apiKey"'
# What a token ended by a password change answers: what an expired one does (simplejwt's words).
TOKEN_ENDED = "Given token not valid for any token type"
# Access tokens already verified by this process, until they expire: checking the signature
# and the claims again cost a tenth of /v1/me (issue 18). A token's signature and expiry are a
# function of the token, the signing key and the clock alone (access tokens are never
# blacklisted), so a memo per process is exact; it holds no state that other nodes would need
# to see. Whether the user's password changed since is read with the caller on every request.
_VERIFIED_TOKENS: BoundedMemo[bytes, tuple[float, object]] = BoundedMemo(4096)


def token_user_id(claims) -> int | None:
    """The user id a verified token's claims name, or None when they name none.

    A user id as this service signs them: an int (as tokens are issued) or a string of ASCII
    digits, from 1 to 2^63-1. A token signed elsewhere with our key must still not reach the
    database with 10^23, "abc", [1], 1.5 or true (a 500, or true read as user 1): the bearer
    route and the refresh route both refuse such a token with 401.
    """
    user_id = claims.get(jwt_settings.USER_ID_CLAIM)
    if type(user_id) is not int:
        return id_or_none(str(user_id))
    return user_id if 0 < user_id <= MAX_BIGINT else None


def _raw_api_key(request) -> str:
    raw = request.headers.get(settings.API_KEY_HEADER, "").strip()
    if settings.API_KEY_REQUIRED and not raw:
        raise AuthenticationFailed("The apiKey header is missing.", code="api_key_missing")
    return raw


def _invalid_key() -> AuthenticationFailed:
    return AuthenticationFailed("The apiKey is not valid.", code="api_key_invalid")


def check_api_key(request) -> None:
    """The key alone (token routes, or a request whose bearer token is missing or bad)."""
    if not settings.API_KEY_REQUIRED:
        return
    raw = _raw_api_key(request)
    if len(raw) > 512 or not api_key_is_active(raw):
        raise _invalid_key()


def api_key_accepted(request) -> bool:
    """Whether the request's API key would pass `check_api_key`: the gate before a /v1 body is
    read or refused (REQUEST_BODY_GATE, apps.core.request_bodies)."""
    try:
        check_api_key(request)
    except AuthenticationFailed:
        return False
    return True


class ApiKeyAuthentication(BaseAuthentication):
    """Only the API key: the token routes, where no bearer token exists yet."""

    def authenticate(self, request):
        check_api_key(request)
        return None

    def authenticate_header(self, request) -> str:
        return API_KEY_CHALLENGE


class ApiKeyBearerAuthentication(JWTAuthentication):
    """The API key first, then the bearer access token.

    With a well-formed token, the key, the user, its agencies, the permissions version and the
    digest of its password are read in one SQL query or, kept in the shared cache, one cache
    round trip; the permissions are remembered under that version (apps.accounts.principal). A
    token issued under another password than the user's (apps.accounts.tokens) answers as an
    expired one does.
    """

    def get_raw_token(self, header: bytes) -> bytes | None:
        # The scheme in any case (simplejwt compares it byte for byte with "Bearer", so
        # `bearer <token>` read as no credentials at all), as /metrics reads it.
        token = bearer_token(header)
        if token == b"":
            raise AuthenticationFailed(
                "Authorization header must contain two space-delimited values",
                code="bad_authorization_header",
            )
        return token

    def get_validated_token(self, raw_token):
        found = _VERIFIED_TOKENS.get(raw_token)
        if found is not None and time.time() < found[0]:
            return found[1]
        validated = super().get_validated_token(raw_token)
        _VERIFIED_TOKENS.remember(raw_token, (float(validated["exp"]), validated))
        return validated

    def authenticate(self, request):
        raw_key = _raw_api_key(request)
        try:
            header = self.get_header(request)
            raw_token = self.get_raw_token(header) if header is not None else None
            if raw_token is None:
                check_api_key(request)
                return None
            validated = self.get_validated_token(raw_token)
            user_id = token_user_id(validated)
            if user_id is None:
                raise ValueError("not a user id")
        except (
            AuthenticationFailed,
            InvalidToken,
            KeyError,
            TypeError,
            ValueError,
            OverflowError,  # an `exp` past any date
        ) as exc:
            check_api_key(request)  # a bad key is named before a bad token
            if isinstance(exc, AuthenticationFailed):
                raise
            raise InvalidToken("Token contained no recognizable user identification") from exc
        if len(raw_key) > 512:
            raise _invalid_key()
        key_active, user = caller(key_hash=hash_api_key(raw_key), user_id=user_id)
        if settings.API_KEY_REQUIRED and not key_active:
            raise _invalid_key()
        if user is None:
            raise AuthenticationFailed("User not found", code="user_not_found")
        if not user.is_active:
            raise AuthenticationFailed("User is inactive", code="user_inactive")
        if not issued_under(validated, user._password_digest):
            raise InvalidToken(TOKEN_ENDED)
        attach_permissions(user)
        return user, validated

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
