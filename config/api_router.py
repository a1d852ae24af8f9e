"""The one router mounted at /v1."""

from django.urls import path, register_converter
from rest_framework.routers import SimpleRouter

from apps.accounts.api.views import MeView, TokenRefreshView, TokenView
from apps.certificates.api.views import (
    CertificateCheckView,
    ClientCertificateView,
    VehicleCertificateView,
)
from apps.clients.api.views import ClientViewSet
from apps.compliance.api.views import RequirementProfileViewSet
from apps.core.converters import IdConverter
from apps.coverages.api.views import (
    ClientVerificationView,
    DriverCoverageView,
    FleetVerificationView,
    VehicleCoverageView,
    VehicleVerificationView,
)
from apps.documents.api.views import (
    ClientDocumentsView,
    DocumentDownloadView,
    DocumentItemView,
    PolicyDocumentsView,
)
from apps.drivers.api.views import DriverVehicleView, DriverViewSet
from apps.events.api.views import EventFeedView
from apps.policies.api.views import PolicyViewSet
from apps.reports.api.views import ReportRawDataView
from apps.vehicles.api.views import LienholderDetailView, PolicyVehiclesView, VehicleViewSet
from apps.webhooks.api.views import WebhookViewSet

register_converter(IdConverter, "id")

router = SimpleRouter(trailing_slash=False)
router.register("clients", ClientViewSet, basename="client")
router.register("policies", PolicyViewSet, basename="policy")
router.register("vehicles", VehicleViewSet, basename="vehicle")
router.register("drivers", DriverViewSet, basename="driver")
router.register("requirement-profiles", RequirementProfileViewSet, basename="requirement-profile")
router.register("webhooks", WebhookViewSet, basename="webhook")

urlpatterns = [
    path("auth/token", TokenView.as_view(), name="auth-token"),
    path("auth/token/refresh", TokenRefreshView.as_view(), name="auth-token-refresh"),
    path("me", MeView.as_view(), name="me"),
    path("events", EventFeedView.as_view(), name="events"),
    path("vehicles/lienholders/<id:pk>", LienholderDetailView.as_view(), name="lienholder-detail"),
    path("coverages/clients", ClientVerificationView.as_view(), name="verify-clients"),
    path("coverages/vehicles", VehicleVerificationView.as_view(), name="verify-vehicles"),
    path("coverages/vehicles/batch", FleetVerificationView.as_view(), name="verify-fleet"),
    path("certificates/clients", ClientCertificateView.as_view(), name="certificate-client"),
    path("certificates/vehicles", VehicleCertificateView.as_view(), name="certificate-vehicle"),
    path("certificates/<str:number>", CertificateCheckView.as_view(), name="certificate-check"),
    path("documents/clients", ClientDocumentsView.as_view(), name="documents-clients"),
    path("documents/policies", PolicyDocumentsView.as_view(), name="documents-policies"),
    # The spec's four document paths, each written out (a `{module}` pattern documented a
    # path the spec does not have and matched more than it meant).
    *(
        route
        for module in ("client", "policy")
        for route in (
            path(
                f"documents/<id:pk>/{module}",
                DocumentItemView.as_view(),
                {"module": module},
                name=f"document-item-{module}",
            ),
            path(
                f"documents/<id:pk>/{module}/download",
                DocumentDownloadView.as_view(),
                {"module": module},
                name=f"document-download-{module}",
            ),
        )
    ),
    path("reports/<id:pk>/raw-data", ReportRawDataView.as_view(), name="report-raw-data"),
    path("vehicles/coverages", VehicleCoverageView.as_view(), name="vehicle-coverages"),
    path("drivers/coverages", DriverCoverageView.as_view(), name="driver-coverages"),
    path("policies/<id:pk>/vehicles", PolicyVehiclesView.as_view(), name="policy-vehicles"),
    path("drivers/vehicles", DriverVehicleView.as_view(), name="driver-vehicles"),
    *router.urls,
]
