from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from apps.core.permissions import HasPermissions
from apps.core.sorting import IgnoringCase
from apps.core.viewsets import LegacySearchMixin, ScopedViewSet, legacy_search_schema
from apps.drivers.api.serializers import (
    DriverDetailSerializer,
    DriverSerializer,
    DriverVehicleRequestSerializer,
    DriverVehicleSerializer,
)
from apps.drivers.filtersets import DriverFilterSet
from apps.drivers.selectors import driver_detail_queryset, driver_queryset
from apps.drivers.services import driver_create, driver_update, driver_vehicle_link

# Names in alphabetical order whatever their case; their indexes: drivers_agency_name_ci_idx
# (the last name, then the first) and drivers_agency_first_ci_idx.
LAST_NAME, FIRST_NAME = IgnoringCase("last_name"), IgnoringCase("first_name")


@extend_schema_view(
    search=legacy_search_schema(DriverSerializer, "DriverSearchPage"),
)
class DriverViewSet(LegacySearchMixin, ScopedViewSet):
    """Drivers of the caller's agencies."""

    selector = staticmethod(driver_queryset)
    detail_selector = staticmethod(driver_detail_queryset)
    serializer_class = DriverSerializer
    detail_serializer_class = DriverDetailSerializer
    create_service = staticmethod(driver_create)
    update_service = staticmethod(driver_update)
    filterset_class = DriverFilterSet
    default_sort = (LAST_NAME, FIRST_NAME)
    sort_fields = {
        "lastName": LAST_NAME,
        "firstName": FIRST_NAME,
        "clientId": "client_id",
        "status": "status",
        "licenseNumber": "license_number",
        "licenseState": "license_state_code",
        "hireDate": "hire_date",
    }


class DriverVehicleView(APIView):
    """Associate a driver (existing, or created from the body when driverId is 0) with a vehicle."""

    permission_classes = [HasPermissions]
    required_permissions = ("drivers.change_driver",)

    @extend_schema(
        request=DriverVehicleRequestSerializer,
        responses={201: DriverVehicleSerializer},
        operation_id="drivers_vehicles_create",
    )
    def post(self, request):
        body = DriverVehicleRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        with transaction.atomic():
            link = driver_vehicle_link(user=request.user, **body.validated_data)
        driver = driver_queryset(user=request.user).get(pk=link.driver_id)
        data = {
            "id": link.id,
            "driver_id": link.driver_id,
            "vehicle_id": link.vehicle_id,
            "created_at": link.created_at,
            "driver": driver,
        }
        # A link has no URL of its own: the driver's detail lists its vehicles (a driver created
        # here included).
        location = reverse("driver-detail", kwargs={"pk": link.driver_id}, request=request)
        return Response(
            DriverVehicleSerializer(data, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )
