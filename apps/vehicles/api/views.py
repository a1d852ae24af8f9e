from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.permissions import HasPermissions
from apps.core.viewsets import ScopedViewSet
from apps.vehicles.api.serializers import (
    LienholderDetailSerializer,
    VehicleDetailSerializer,
    VehicleSerializer,
)
from apps.vehicles.filtersets import VehicleFilterSet
from apps.vehicles.selectors import lienholder_detail, vehicle_detail_queryset, vehicle_queryset
from apps.vehicles.services import vehicle_create, vehicle_update

VEHICLE_SORT_FIELDS = {
    "vin": "serial_number",
    "serialNumber": "serial_number",
    "unit": "unit",
    "make": "make__name",
    "owner": "owner",
    "garagingAddress": "garaging_address",
    "statedValue": "stated_value",
    "value": "stated_value",
    "status": "status",
    "clientId": "client_id",
    "modelYear": "model_year",
    "licensePlate": "license_plate",
}


@extend_schema_view(
    retrieve=extend_schema(responses=VehicleDetailSerializer),
    update=extend_schema(request=VehicleSerializer(partial=True)),
)
class VehicleViewSet(ScopedViewSet):
    """Vehicles of the caller's agencies."""

    selector = staticmethod(vehicle_queryset)
    serializer_class = VehicleSerializer
    input_serializer_class = VehicleSerializer
    create_service = staticmethod(vehicle_create)
    update_service = staticmethod(vehicle_update)
    filterset_class = VehicleFilterSet
    default_sort = ("unit",)
    sort_fields = VEHICLE_SORT_FIELDS

    def get_queryset(self):
        if self.action in ("retrieve", "create", "update"):
            return vehicle_detail_queryset(user=self.request.user)
        return super().get_queryset()

    def get_serializer_class(self):
        if self.action in ("retrieve", "create", "update"):
            return VehicleDetailSerializer
        return VehicleSerializer


class LienholderDetailView(APIView):
    """A lienholder with its totals and the live vehicles it holds a lien on."""

    permission_classes = [HasPermissions]
    required_permissions = ("vehicles.view_lienholder",)

    @extend_schema(
        responses=LienholderDetailSerializer, operation_id="vehicles_lienholders_retrieve"
    )
    def get(self, request, pk: int):
        lienholder = lienholder_detail(user=request.user, lienholder_id=pk)
        if lienholder is None:
            raise NotFound("No lienholder with this id.")
        return Response(LienholderDetailSerializer(lienholder).data)
