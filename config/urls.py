from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from apps.core.views import healthz, readyz
from apps.documents.api.views import document_file

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("v1/schema", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file, so the page needs no
    # inline script and runs under the Content-Security-Policy.
    path("v1/docs", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    path("v1/", include("config.api_router")),
    path("downloads/<str:token>", document_file, name="document-file"),
    path("admin/", admin.site.urls),
]
