from django.conf import settings
from django.contrib import admin
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from apps.core.metrics import metrics
from apps.core.views import healthz, landing, readyz
from apps.documents.api.views import document_file

urlpatterns = [
    path("", landing, name="landing"),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("readyz", readyz, name="readyz"),
    path("v1/schema", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file, so the page needs no
    # inline script and runs under the Content-Security-Policy.
    path("v1/docs", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    path("v1/", include("config.api_router")),
    path("downloads/<str:token>", document_file, name="document-file"),
    path("admin/", admin.site.urls),
]

if settings.SERVE_STATIC:
    # `make run` (gunicorn, debug off) serves the apps' static files itself; nginx does it in
    # production.
    urlpatterns += [re_path(r"^static/(?P<path>.*)$", serve_static, {"insecure": True})]
