from __future__ import annotations

from functools import partial

from rest_framework import serializers
from rest_framework.exceptions import AuthenticationFailed
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.serializers import TokenObtainPairSerializer, TokenRefreshSerializer

from apps.accounts.authentication import token_user_id
from apps.accounts.login_failures import counted_login
from apps.accounts.selectors import active_user_password
from apps.accounts.tokens import RefreshToken, issued_under, password_digest
from apps.core.camel_case import CamelCased
from apps.core.serializers import (
    ShapedSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
)


class TokenRequestSerializer(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=256, trim_whitespace=False)


class LoginSerializer(TokenObtainPairSerializer):
    """simplejwt's login, with strict fields and failed logins counted (contract section 3);
    the tokens carry the digest of the password they are issued under."""

    token_class = RefreshToken

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields.update(TokenRequestSerializer().get_fields())

    def validate(self, attrs: dict) -> dict:
        # Counted before the password is checked (429 past the limit, unchecked), so a burst
        # of guesses cannot all pass a count none of them has written yet; the admin login
        # shares the counts (apps.backoffice.login).
        try:
            tokens = counted_login(
                request=self.context["request"],
                username=attrs["username"],
                check=partial(super().validate, attrs),
            )
        except AuthenticationFailed:
            raise AuthenticationFailed("The user name or password is wrong.") from None
        return {"access": tokens["access"], "refresh": tokens["refresh"]}


class RefreshSerializer(TokenRefreshSerializer):
    """simplejwt's refresh, refused once the user is gone or inactive or its password changed."""

    refresh = StrictCharField()

    def validate(self, attrs: dict) -> dict:
        try:
            refresh = RefreshToken(attrs["refresh"])
        except TokenError as exc:
            raise AuthenticationFailed("The refresh token is invalid or expired.") from exc
        # A refresh token outlives a deactivation: the user must still exist and be active,
        # or a fired employee keeps minting access tokens until the refresh token expires.
        # (simplejwt's own check answers 500 for a deleted user.) The user id claim is read by
        # the bearer route's rule: one it would refuse ("abc", [1], 10^30) is a 401 here too.
        # Issued under another password (a stolen token, the password changed since): refused,
        # and the access token it would give copies its digest, so none outlives a change.
        user_id = token_user_id(refresh.payload)
        password = None if user_id is None else active_user_password(user_id=user_id)
        if password is None or not issued_under(refresh.payload, password_digest(password)):
            raise AuthenticationFailed("The refresh token is invalid or expired.")
        return {"access": str(refresh.access_token)}


class TokenPairSerializer(serializers.Serializer):
    access = StrictCharField()
    refresh = StrictCharField()


class RefreshRequestSerializer(serializers.Serializer):
    refresh = StrictCharField()


class AccessTokenSerializer(serializers.Serializer):
    access = StrictCharField()


class AgencyRefSerializer(ShapedSerializer):
    id = StrictIntegerField()
    name = StrictCharField()

    @staticmethod
    def shape(ref: tuple[int, str]) -> dict:
        pk, name = ref
        return {"id": pk, "name": name}


# /v1/me is the hottest path (issue 18): `shape` maps the caller's plain values in one call,
# with no field tree; `agencies` are the (id, name) pairs of apps.agencies.selectors.agency_refs.
# Its keys are the ones the API sends (`isSuperuser`; `id` and `name` are the same in both
# cases), so the answer is a CamelCased the renderer sends without walking its ~100 permissions.
class MeSerializer(ShapedSerializer):
    username = StrictCharField()
    is_superuser = StrictBooleanField()
    agencies = AgencyRefSerializer(many=True)
    permissions = serializers.ListField(child=StrictCharField())

    @staticmethod
    def shape(user, agencies) -> CamelCased:
        return CamelCased(
            username=user.get_username(),
            isSuperuser=user.is_superuser,
            agencies=[AgencyRefSerializer.shape(ref) for ref in agencies],
            permissions=sorted(user.get_all_permissions()),
        )
