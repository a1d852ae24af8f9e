from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from apps.core.dates import today
from apps.core.permissions import HasPermissions
from apps.coverages.api import serializers as s
from apps.coverages.permissions import (
    CLIENT_VERIFICATION_PERMISSIONS,
    VEHICLE_VERIFICATION_PERMISSIONS,
)
from apps.coverages.selectors import (
    VerificationAnswer,
    verify_clients,
    verify_fleet,
    verify_vehicles,
)
from apps.coverages.services import DRIVER, VEHICLE, coverage_assign, coverage_update


class ClientVerificationView(APIView):
    """Is this carrier insured? By DOT number(s) or client id."""

    permission_classes = [HasPermissions]
    required_permissions = CLIENT_VERIFICATION_PERMISSIONS
    params_class = s.ClientVerificationParams

    @extend_schema(
        responses=s.ClientVerificationResponseSerializer,
        operation_id="coverages_clients_verify",
    )
    def get(self, request):
        query = self.params_class.parse(request)
        on, profile = query["as_of"], query.get("profile")
        if "id" in query:
            results = verify_clients(
                user=request.user, on=on, client_id=query["id"], profile=profile
            )
            if not results:
                raise NotFound("No client with this id.")
        else:
            dots = query["dots"] if "dots" in query else [query["dot"]]
            results = verify_clients(user=request.user, on=on, dots=dots, profile=profile)
            if not any(r.found for r in results):
                detail = "DOT number not found." if "dot" in query else "No DOT number was found."
                raise NotFound(detail)
        # The shaped answer itself (ShapedSerializer.data is `shape`): no serializer instance
        # and field set built per request.
        return Response(
            s.ClientVerificationResponseSerializer.shape(VerificationAnswer(results, on))
        )


class VehicleVerificationView(APIView):
    """Is this truck insured? By VIN or license plate."""

    permission_classes = [HasPermissions]
    required_permissions = VEHICLE_VERIFICATION_PERMISSIONS
    params_class = s.VehicleVerificationParams

    @extend_schema(
        responses=s.VehicleVerificationResponseSerializer,
        operation_id="coverages_vehicles_verify",
    )
    def get(self, request):
        query = self.params_class.parse(request)  # a VIN, or a plate (and its state)
        on = query.pop("as_of")
        results = verify_vehicles(user=request.user, on=on, **query)
        if not results:
            raise NotFound("No vehicle matches.")
        return Response(
            s.VehicleVerificationResponseSerializer.shape(VerificationAnswer(results, on))
        )


class FleetVerificationView(APIView):
    """The fleet gap check: up to 1,000 VINs and plates in one call."""

    schema_read_only_post = True  # a POST that only reads: never a conflict
    permission_classes = [HasPermissions]
    required_permissions = VEHICLE_VERIFICATION_PERMISSIONS

    @extend_schema(
        request=s.FleetRequestSerializer,
        responses=s.FleetResponseSerializer,
        operation_id="coverages_vehicles_batch",
    )
    def post(self, request):
        body = s.FleetRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        on = body.validated_data.get("as_of") or today()
        profile = s.profile_choice(request, body.validated_data.get("profile"))
        answer = verify_fleet(
            user=request.user,
            on=on,
            vins=body.validated_data["vins"],
            plates=body.validated_data["license_plates"],
            profile=profile,
        )
        return Response(s.FleetResponseSerializer.shape(answer))


class CoverageView(APIView):
    """Shared body of the vehicle and driver coverage endpoints."""

    permission_classes = [HasPermissions]
    subject = VEHICLE
    create_serializer: type = s.VehicleAssignmentCreateSerializer
    update_serializer: type = s.VehicleAssignmentUpdateSerializer
    output_serializer: type = s.VehicleAssignmentSerializer

    def arguments(self, body) -> dict:
        """The service's keyword arguments: `vehicleId` or `driverId` is its `target_id`."""
        arguments = dict(body.validated_data)
        arguments["target_id"] = arguments.pop(f"{self.subject.field}_id")
        return arguments

    def post(self, request):
        body = self.create_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        with transaction.atomic():
            coverage = coverage_assign(
                user=request.user, subject=self.subject, **self.arguments(body)
            )
        # A period has no URL of its own: the vehicle's or driver's detail shows it.
        field = self.subject.field
        location = reverse(
            f"{field}-detail", kwargs={"pk": getattr(coverage, f"{field}_id")}, request=request
        )
        return Response(
            self.output_serializer(coverage).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    def put(self, request):
        body = self.update_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        coverage = coverage_update(user=request.user, subject=self.subject, **self.arguments(body))
        return Response(self.output_serializer(coverage).data)


def _coverage_schema(view: type[CoverageView]) -> type[CoverageView]:
    """Document a coverage endpoint from the serializers it declares."""
    route = f"{view.subject.field}s_coverages"  # vehicles_coverages, drivers_coverages
    return extend_schema_view(
        post=extend_schema(
            request=view.create_serializer,
            responses={201: view.output_serializer},
            operation_id=f"{route}_create",
        ),
        put=extend_schema(
            request=view.update_serializer,
            responses=view.output_serializer,
            operation_id=f"{route}_update",
        ),
    )(view)


@_coverage_schema
class VehicleCoverageView(CoverageView):
    """Schedule a vehicle on a policy (4), remove it (1), decline it (2) or move its date (4)."""

    required_permissions = ("vehicles.change_vehicle",)


@_coverage_schema
class DriverCoverageView(CoverageView):
    """Schedule a driver on an OA/DD policy (7), remove (1), decline (2) or move its date (7)."""

    required_permissions = ("drivers.change_driver",)
    subject = DRIVER
    create_serializer = s.DriverAssignmentCreateSerializer
    update_serializer = s.DriverAssignmentUpdateSerializer
    output_serializer = s.DriverAssignmentSerializer
