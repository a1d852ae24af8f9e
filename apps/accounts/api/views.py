"""Token issue and refresh (apiKey only), and who-am-I."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework_simplejwt import views as simplejwt_views
from rest_framework_simplejwt.views import TokenObtainPairView

from apps.accounts.api.serializers import (
    AccessTokenSerializer,
    LoginSerializer,
    MeSerializer,
    RefreshRequestSerializer,
    RefreshSerializer,
    TokenPairSerializer,
    TokenRequestSerializer,
)
from apps.accounts.authentication import ApiKeyAuthentication
from apps.agencies.selectors import agency_refs


class _ApiKeyTokenView:
    """simplejwt's token view behind the apiKey alone; 401s challenge for the apiKey."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [AllowAny]
    get_authenticate_header = APIView.get_authenticate_header


@extend_schema_view(
    post=extend_schema(
        request=TokenRequestSerializer,
        responses={200: TokenPairSerializer},
        operation_id="auth_token_create",
        auth=[{"apiKey": []}],
        tags=["auth"],
    )
)
class TokenView(_ApiKeyTokenView, TokenObtainPairView):
    """Exchange a user name and password for an access and a refresh token."""

    serializer_class = LoginSerializer


@extend_schema_view(
    post=extend_schema(
        request=RefreshRequestSerializer,
        responses={200: AccessTokenSerializer},
        operation_id="auth_token_refresh_create",
        auth=[{"apiKey": []}],
        tags=["auth"],
    )
)
class TokenRefreshView(_ApiKeyTokenView, simplejwt_views.TokenRefreshView):
    """Exchange a refresh token for a new access token."""

    serializer_class = RefreshSerializer


class MeView(APIView):
    """The caller: user name, the agencies it may act for, its permissions."""

    schema_may_404 = False  # it answers about the caller, who always exists
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: MeSerializer}, tags=["auth"])
    def get(self, request):
        user = request.user
        return Response(MeSerializer.shape(user, agency_refs(user=user)))
