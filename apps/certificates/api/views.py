from __future__ import annotations

from collections.abc import Callable

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.certificates.builder import (
    Certificate,
    NothingInForce,
    client_certificate,
    vehicle_certificate,
)
from apps.certificates.numbers import certificate_kind, parse_certificate_number
from apps.certificates.pdf import render_certificate_pdf
from apps.certificates.permissions import (
    CLIENT_CERTIFICATE_PERMISSIONS,
    VEHICLE_CERTIFICATE_PERMISSIONS,
)
from apps.certificates.serializers import CertificateSerializer
from apps.core.params import (
    AsOfParam,
    DotParam,
    IdParam,
    PlateParam,
    QueryParameters,
    TextParam,
)
from apps.core.permissions import HasPermissions
from apps.core.renderers import CamelCaseJSONRenderer
from apps.vehicles.params import PLATE_STATE, PlateStateParam, VinParam, plate_state_only_with_plate


class PdfRenderer(BaseRenderer):
    media_type = "application/pdf"
    format = "pdf"
    charset = None
    render_style = "binary"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return render_certificate_pdf(data)


RESPONSES = {
    (200, "application/json"): CertificateSerializer,
    (200, "application/pdf"): OpenApiTypes.BINARY,
}


NO_SUCH_CERTIFICATE = "No certificate has this number."


AS_OF = "The date the certificate speaks for (default today)."


class HolderParams(QueryParameters):
    # Whom a certificate is for. The length rule is checked after every other parameter of the
    # subclasses has parsed, so a bad record parameter is named first.
    holder_name = TextParam(default="", help_text="The certificate holder's name.")
    holder_address = TextParam(
        default="", help_text="The certificate holder's address (newlines allowed)."
    )

    def validate(self, attrs):
        # The error names the parameter that is too long (the name first when both are).
        for name, field, most in (
            ("holder_name", "holderName", 200),
            ("holder_address", "holderAddress", 500),
        ):
            if len(attrs[name]) > most:
                raise ValidationError({field: [f"At most {most} characters."]})
        return attrs


class ClientCertificateParams(HolderParams):
    one_of = ("id", "dot")
    id = IdParam(help_text="A client id.")
    dot = DotParam(help_text="A DOT number.")
    as_of = AsOfParam(help_text=AS_OF)


class VehicleCertificateParams(HolderParams):
    one_of = ("id", "vin", "license_plate")
    id = IdParam(help_text="A vehicle id.")
    vin = VinParam(help_text="A 17-character VIN.")
    license_plate = PlateParam(help_text="A license plate.")
    license_plate_state = PlateStateParam(help_text=PLATE_STATE)
    as_of = AsOfParam(help_text=AS_OF)
    client_id = IdParam(help_text="Narrow to the vehicle of this client.")

    def read(self, data, request):
        return super().read(plate_state_only_with_plate(data), request)


class CertificateView(APIView):
    """Shared machinery: JSON or PDF, holder fields (errors are problem+json even for PDF:
    apps.core.problems.ProblemResponse)."""

    renderer_classes = [CamelCaseJSONRenderer, PdfRenderer]
    permission_classes = [HasPermissions]
    params_class: type[HolderParams] = HolderParams

    def respond(self, request, certificate: Certificate) -> Response:
        response = Response(CertificateSerializer(certificate).data)
        if isinstance(request.accepted_renderer, PdfRenderer):
            filename = f"certificate-{certificate.certificate_number}.pdf"
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class CertificateIssueView(CertificateView):
    # Issues one kind of certificate: its builder, its query parameters (`params_class`), and
    # the builder's keyword for the record's id (what `id`, and a certificate number, name).
    builder: Callable[..., Certificate]
    id_keyword: str

    def get(self, request):
        query = self.params_class.parse(request)
        if "id" in query:
            query[self.id_keyword] = query.pop("id")
        certificate = self.builder(user=request.user, on=query.pop("as_of"), **query)
        return self.respond(request, certificate)


@extend_schema_view(
    get=extend_schema(responses=RESPONSES, operation_id="certificates_clients_retrieve")
)
class ClientCertificateView(CertificateIssueView):
    """The ACORD 25 certificate of a client, from the policies in force."""

    required_permissions = CLIENT_CERTIFICATE_PERMISSIONS
    builder = staticmethod(client_certificate)
    params_class = ClientCertificateParams
    id_keyword = "client_id"


@extend_schema_view(
    get=extend_schema(responses=RESPONSES, operation_id="certificates_vehicles_retrieve")
)
class VehicleCertificateView(CertificateIssueView):
    """The ACORD 25 certificate of one vehicle: only the coverages it is scheduled on."""

    required_permissions = VEHICLE_CERTIFICATE_PERMISSIONS
    builder = staticmethod(vehicle_certificate)
    params_class = VehicleCertificateParams
    id_keyword = "vehicle_id"


class CertificateCheckView(CertificateView):
    """Look a certificate up again by its number: what it certified, as of its date."""

    required_permissions = ("policies.view_policy",)

    @extend_schema(responses=RESPONSES, operation_id="certificates_check")
    def get(self, request, number: str):
        kind = certificate_kind(number)
        if kind is None:
            raise NotFound(NO_SUCH_CERTIFICATE)
        # Looking a certificate up again shows what issuing it shows: it needs the same
        # permissions as the endpoint that issues that kind of certificate. The kind is the
        # number's first letter, so the refusal comes before the signature is checked: a
        # forged number is refused as a genuine one is, and tells nothing of signatures.
        kind_view = ClientCertificateView if kind == "C" else VehicleCertificateView
        if not request.user.has_perms(kind_view.required_permissions):
            self.permission_denied(request, message="You may not see this kind of certificate.")
        # The holder is checked before the signature, so a bad parameter is the same 400 for a
        # genuine number and a forged one, and cannot tell them apart.
        holder = self.params_class.parse(request)
        ref = parse_certificate_number(number)
        if ref is None:
            raise NotFound(NO_SUCH_CERTIFICATE)
        # A record the builder cannot find (of another agency, or deleted since) answers as a
        # forged number does, so a genuine number reveals nothing. One it found, in the
        # caller's own agencies, with nothing in force on that date says so (contract section
        # 9), as issuing its certificate for that date does: the caller could ask that anyway.
        try:
            certificate = kind_view.builder(
                user=request.user, on=ref.as_of, **{kind_view.id_keyword: ref.record_id}, **holder
            )
        except NothingInForce:
            raise
        except NotFound:
            raise NotFound(NO_SUCH_CERTIFICATE) from None
        return self.respond(request, certificate)
