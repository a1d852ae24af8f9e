"""Admin actions that download certificate PDFs, through the same builder as the API."""

from __future__ import annotations

import io
import zipfile

from django.contrib import messages
from django.http import HttpResponse
from rest_framework.exceptions import NotFound

from apps.certificates.builder import client_certificate, vehicle_certificate
from apps.certificates.pdf import certificate_pdf
from apps.core.admin import nothing_done
from apps.core.dates import today


def _download(modeladmin, request, queryset, build):
    files = []
    records = list(queryset)
    if not records:
        nothing_done(modeladmin, request)
        return None
    for obj in records:
        try:
            certificate = build(obj)
        except NotFound as exc:
            modeladmin.message_user(request, f"{obj}: {exc.detail}", messages.WARNING)
            continue
        files.append(
            (f"certificate-{certificate.certificate_number}.pdf", certificate_pdf(certificate))
        )
    if not files:
        return None
    if len(files) == 1:
        name, content = files[0]
        response = HttpResponse(content, content_type="application/pdf")
    else:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, content in files:
                archive.writestr(name, content)
        name = "certificates.zip"
        response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _download_action(build, id_argument: str, kind: str):
    """The admin action: the certificate PDF of each selected record (a ZIP when several),
    from `build(user=, on=today, <id_argument>=the record's id)`."""

    def download(modeladmin, request, queryset):
        return _download(
            modeladmin,
            request,
            queryset,
            lambda obj: build(user=request.user, on=today(), **{id_argument: obj.pk}),
        )

    download.__name__ = f"download_{kind}_certificates"
    download.short_description = "Download certificate (ACORD 25 PDF)"
    return download


download_client_certificates = _download_action(client_certificate, "client_id", "client")
download_vehicle_certificates = _download_action(vehicle_certificate, "vehicle_id", "vehicle")
