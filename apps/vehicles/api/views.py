from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.permissions import HasPermissions
from apps.core.prepared import record_by_key
from apps.core.viewsets import ScopedViewSet
from apps.policies.selectors import policy_queryset
from apps.vehicles.api.serializers import (
    LienholderDetailSerializer,
    PolicyVehicleSerializer,
    VehicleDetailSerializer,
    VehicleSerializer,
)
from apps.vehicles.filtersets import PolicyVehicleFilterSet, VehicleFilterSet
from apps.vehicles.models import Vehicle
from apps.vehicles.selectors import (
    lienholder_detail,
    policy_vehicle_queryset,
    vehicle_detail_queryset,
    vehicle_queryset,
)
from apps.vehicles.services import vehicle_create, vehicle_update

VEHICLE_SORT_FIELDS = {
    "vin": "serial_number",
    "serialNumber": "serial_number",
    "unit": "unit",
    "make": "make_name",
    "owner": "owner",
    "garagingAddress": "garaging_address",
    "statedValue": "stated_value",
    "value": "stated_value",
    "minValue": "stated_value",  # the range filters' field, as on a policy's vehicles
    "maxValue": "stated_value",
    "status": "status",
    "clientId": "client_id",
    "modelYear": "model_year",
    "licensePlate": "license_plate",
    "deleted": "deleted",  # a filter, so a sort key (contract section 7)
}


class VehicleViewSet(ScopedViewSet):
    """Vehicles of the caller's agencies."""

    selector = staticmethod(vehicle_queryset)
    detail_selector = staticmethod(vehicle_detail_queryset)
    serializer_class = VehicleSerializer
    detail_serializer_class = VehicleDetailSerializer
    create_service = staticmethod(vehicle_create)
    update_service = staticmethod(vehicle_update)
    filterset_class = VehicleFilterSet
    default_sort = ("unit",)
    sort_fields = VEHICLE_SORT_FIELDS


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
        return Response(LienholderDetailSerializer(lienholder, context={"request": request}).data)


class PolicyVehiclesView(ListAPIView):
    """The vehicles scheduled on a policy, each once with its latest period on it.

    The spec promises "paginated vehicles of the policy": an item is the vehicle (its `id` is
    the vehicle's), not a scheduling period; a unit removed and scheduled again appears once,
    with the period that began last. Status filters and sorts apply to that period. A deleted
    vehicle is listed only when `deleted` asks for it, as on every vehicle list.
    """

    serializer_class = PolicyVehicleSerializer
    filterset_class = PolicyVehicleFilterSet
    permission_classes = [HasPermissions]
    required_permissions = ("policies.view_policy", "vehicles.view_vehicle")
    sort_fields = {
        "policyAddedDate": "policy_added_date",
        "policyRemovedDate": "policy_removed_date",
        "status": "coverage_status",
        "unit": "unit",
        "make": "make_name",
        "value": "stated_value",
        "minValue": "stated_value",
        "maxValue": "stated_value",
        "vin": "serial_number",
        "deleted": "deleted",
    }
    default_sort = ("policy_added_date",)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Vehicle.objects.none()
        policy = record_by_key(
            policy_queryset(user=self.request.user),
            lambda policies: policies.filter(pk=self.kwargs["pk"]).first(),
        )
        if policy is None:
            raise NotFound("No policy with this id.")
        return policy_vehicle_queryset(policy=policy)
