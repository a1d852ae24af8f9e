"""The one router mounted at /v1."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from apps.accounts.api.views import MeView, TokenRefreshView, TokenView
from apps.clients.api.views import ClientViewSet

router = SimpleRouter(trailing_slash=False)
router.register("clients", ClientViewSet, basename="client")

urlpatterns = [
    path("auth/token", TokenView.as_view(), name="auth-token"),
    path("auth/token/refresh", TokenRefreshView.as_view(), name="auth-token-refresh"),
    path("me", MeView.as_view(), name="me"),
    *router.urls,
]
