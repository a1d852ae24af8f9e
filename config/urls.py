from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from apps.core.views import healthz, readyz
from apps.documents.api.views import document_file

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("v1/schema", SpectacularAPIView.as_view(), name="schema"),
    path("v1/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("v1/", include("config.api_router")),
    path("downloads/<str:token>", document_file, name="document-file"),
    path("admin/", admin.site.urls),
]
