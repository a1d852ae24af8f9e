"""Token issue and refresh (apiKey only), and who-am-I."""

from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.tokens import RefreshToken

from apps.accounts.api.serializers import (
    AccessTokenSerializer,
    MeSerializer,
    RefreshRequestSerializer,
    TokenPairSerializer,
    TokenRequestSerializer,
)
from apps.accounts.authentication import ApiKeyAuthentication
from apps.accounts.login_failures import (
    check_login_allowed,
    clear_login_failures,
    client_address,
    record_login_failure,
)
from apps.agencies.selectors import agency_list


class TokenView(APIView):
    """Exchange a user name and password for an access and a refresh token."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [AllowAny]

    @extend_schema(
        request=TokenRequestSerializer,
        responses={200: TokenPairSerializer},
        operation_id="auth_token_create",
        auth=[{"apiKey": []}],
        tags=["auth"],
    )
    def post(self, request):
        body = TokenRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        username = body.validated_data["username"]
        address = client_address(request)
        check_login_allowed(username=username, address=address)
        user = authenticate(request, username=username, password=body.validated_data["password"])
        if user is None or not user.is_active:
            record_login_failure(username=username, address=address)
            raise AuthenticationFailed("The user name or password is wrong.")
        clear_login_failures(username=username)
        refresh = RefreshToken.for_user(user)
        return Response({"access": str(refresh.access_token), "refresh": str(refresh)})


class TokenRefreshView(APIView):
    """Exchange a refresh token for a new access token."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [AllowAny]

    @extend_schema(
        request=RefreshRequestSerializer,
        responses={200: AccessTokenSerializer},
        operation_id="auth_token_refresh_create",
        auth=[{"apiKey": []}],
        tags=["auth"],
    )
    def post(self, request):
        body = RefreshRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            refresh = RefreshToken(body.validated_data["refresh"])
        except TokenError as exc:
            raise AuthenticationFailed("The refresh token is invalid or expired.") from exc
        # A refresh token outlives a deactivation: the user must still exist and be active,
        # or a fired employee keeps minting access tokens until the refresh token expires.
        user_id = refresh.payload.get(api_settings.USER_ID_CLAIM)
        if not get_user_model().objects.filter(pk=user_id, is_active=True).exists():
            raise AuthenticationFailed("The refresh token is invalid or expired.")
        return Response({"access": str(refresh.access_token)})


class MeView(APIView):
    """The caller: user name, the agencies it may act for, its permissions."""

    schema_may_404 = False  # it answers about the caller, who always exists
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: MeSerializer}, tags=["auth"])
    def get(self, request):
        user = request.user
        data = {
            "username": user.get_username(),
            "is_superuser": user.is_superuser,
            "agencies": [{"id": a.id, "name": a.name} for a in agency_list(user=user)],
            "permissions": sorted(user.get_all_permissions()),
        }
        return Response(MeSerializer(data).data)
