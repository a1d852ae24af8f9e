"""Admin actions that download certificate PDFs, through the same builder as the API."""

from __future__ import annotations

import io
import zipfile

from django.contrib import messages
from django.http import HttpResponse
from rest_framework.exceptions import NotFound

from apps.certificates.builder import client_certificate, vehicle_certificate
from apps.certificates.pdf import certificate_pdf
from apps.core.dates import today


def _download(modeladmin, request, queryset, build):
    files = []
    for obj in queryset:
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


def download_client_certificates(modeladmin, request, queryset):
    """Certificate PDF of each selected client (a ZIP when several)."""
    return _download(
        modeladmin,
        request,
        queryset,
        lambda client: client_certificate(user=request.user, on=today(), client_id=client.pk),
    )


def download_vehicle_certificates(modeladmin, request, queryset):
    """Certificate PDF of each selected vehicle (a ZIP when several)."""
    return _download(
        modeladmin,
        request,
        queryset,
        lambda vehicle: vehicle_certificate(user=request.user, on=today(), vehicle_id=vehicle.pk),
    )


download_client_certificates.short_description = "Download certificate (ACORD 25 PDF)"
download_vehicle_certificates.short_description = "Download certificate (ACORD 25 PDF)"
