"""Admin actions that download certificate PDFs, through the same builder as the API and
under the same permissions (apps.certificates.permissions)."""

from __future__ import annotations

import io
import zipfile

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from rest_framework.exceptions import NotFound

from apps.certificates.builder import client_certificate, vehicle_certificate
from apps.certificates.pdf import certificate_pdf
from apps.certificates.permissions import (
    CLIENT_CERTIFICATE_PERMISSIONS,
    VEHICLE_CERTIFICATE_PERMISSIONS,
)
from apps.core.admin import nothing_done
from apps.core.dates import today


def _download(modeladmin, request, queryset, build):
    """The selected records' certificates, or, when one of them cannot be certified today,
    none: a file of some would pass for all of them, and its warning, queued beside a file
    (a download leaves the page where it is), met staff on whatever page they opened next.
    The list then says, in one message, which records to deselect and why."""
    records = list(queryset)
    if not records:
        nothing_done(modeladmin, request)
        return None
    certificates, refused = [], []
    for obj in records:
        try:
            certificates.append(build(obj))
        except NotFound as exc:
            refused.append(f"{obj}: {exc.detail}")
    if refused:
        modeladmin.message_user(request, _cannot_certify(refused, len(records)), messages.WARNING)
        return None
    files = [
        (f"certificate-{certificate.certificate_number}.pdf", certificate_pdf(certificate))
        for certificate in certificates
    ]
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


def _cannot_certify(refused: list[str], selected: int) -> str:
    """Why nothing was downloaded: each record that cannot be certified, with the reason."""
    reasons = " ".join(refused)
    if selected == 1:
        return reasons
    if len(refused) == selected:
        return (
            f"Nothing was downloaded: none of the {selected} selected can be certified "
            f"today. {reasons}"
        )
    pronoun = "it" if len(refused) == 1 else "them"
    return (
        f"Nothing was downloaded: {len(refused)} of the {selected} selected cannot be "
        f"certified today; deselect {pronoun} to download the others. {reasons}"
    )


def _download_action(build, id_argument: str, kind: str, permissions: tuple[str, ...]):
    """The admin action: the certificate PDF of each selected record (a ZIP when several),
    from `build(user=, on=today, <id_argument>=the record's id)`, for staff holding
    `permissions` (the certificate endpoint's) and no one else: offered only to them (Django
    asks the model admin's `has_certificate_permission`, apps.core.admin_display's
    OneClickCertificateMixin, which reads them as the action's `required_permissions`), and
    refused (403) to anyone else however it is reached."""

    def download(modeladmin, request, queryset):
        if not request.user.has_perms(permissions):
            raise PermissionDenied("You may not download this kind of certificate.")
        return _download(
            modeladmin,
            request,
            queryset,
            lambda obj: build(user=request.user, on=today(), **{id_argument: obj.pk}),
        )

    download.__name__ = f"download_{kind}_certificates"
    download.short_description = "Download certificate (ACORD 25 PDF)"
    download.required_permissions = permissions
    download.allowed_permissions = ("certificate",)
    return download


download_client_certificates = _download_action(
    client_certificate, "client_id", "client", CLIENT_CERTIFICATE_PERMISSIONS
)
download_vehicle_certificates = _download_action(
    vehicle_certificate, "vehicle_id", "vehicle", VEHICLE_CERTIFICATE_PERMISSIONS
)
