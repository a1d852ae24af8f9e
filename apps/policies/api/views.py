from __future__ import annotations

import django_filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.generics import ListAPIView

from apps.core.filters import MoneyFilter
from apps.core.permissions import HasPermissions
from apps.core.viewsets import LegacySearchMixin, ScopedViewSet, legacy_search_schema
from apps.coverages.choices import CoverageStatus
from apps.coverages.models import VehicleCoverage
from apps.policies.api.serializers import PolicySerializer
from apps.policies.filtersets import PolicyFilterSet
from apps.policies.selectors import policy_queryset
from apps.policies.services import policy_create, policy_update
from apps.vehicles.api.serializers import VehicleSerializer
from apps.vehicles.filtersets import MakeFilter


class PolicyVehicleFilterSet(django_filters.FilterSet):
    make = MakeFilter(field_name="vehicle__make")
    minValue = MoneyFilter(field_name="vehicle__stated_value", lookup_expr="gte")
    maxValue = MoneyFilter(field_name="vehicle__stated_value", lookup_expr="lte")
    status = django_filters.TypedChoiceFilter(
        field_name="coverage_status",
        choices=[(v, str(v)) for v in (1, 2, 4)],
        coerce=int,
    )

    class Meta:
        model = VehicleCoverage
        fields = []


class PolicyVehicleSerializer(serializers.Serializer):
    """A unit scheduled on the policy: the vehicle and its period on the policy."""

    assignment_id = serializers.IntegerField(source="id")
    vehicle = VehicleSerializer()
    coverage_status = serializers.IntegerField()
    coverage_status_name = serializers.SerializerMethodField()
    policy_added_date = serializers.DateField()
    policy_removed_date = serializers.DateField(allow_null=True)

    def get_coverage_status_name(self, obj) -> str:
        return CoverageStatus(obj.coverage_status).label


@extend_schema_view(
    search=legacy_search_schema(PolicySerializer, "PolicySearchPage"),
    update=extend_schema(request=PolicySerializer(partial=True)),
)
class PolicyViewSet(LegacySearchMixin, ScopedViewSet):
    """Policies of the caller's agencies."""

    selector = staticmethod(policy_queryset)
    serializer_class = PolicySerializer
    input_serializer_class = PolicySerializer
    create_service = staticmethod(policy_create)
    update_service = staticmethod(policy_update)
    filterset_class = PolicyFilterSet
    default_sort = ("-effective_date",)
    sort_fields = {
        "policy": "policy_number",
        "policyNumber": "policy_number",
        "clientId": "client_id",
        "deleted": "deleted",
        "status": "status",
        "coverageType": "coverage_type__code",
        "effectiveDate": "effective_date",
        "expirationDate": "expiration_date",
        "q": "policy_number",
    }


class PolicyVehiclesView(ListAPIView):
    """The units scheduled on a policy (every period), paginated and filterable."""

    serializer_class = PolicyVehicleSerializer
    filterset_class = PolicyVehicleFilterSet
    permission_classes = [HasPermissions]
    required_permissions = ("policies.view_policy", "vehicles.view_vehicle")
    sort_fields = {
        "policyAddedDate": "policy_added_date",
        "policyRemovedDate": "policy_removed_date",
        "status": "coverage_status",
        "unit": "vehicle__unit",
        "make": "vehicle__make__name",
        "value": "vehicle__stated_value",
        "minValue": "vehicle__stated_value",
        "maxValue": "vehicle__stated_value",
        "vin": "vehicle__serial_number",
    }
    default_sort = ("policy_added_date",)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return VehicleCoverage.objects.none()
        policy = policy_queryset(user=self.request.user).filter(pk=self.kwargs["pk"]).first()
        if policy is None:
            raise NotFound("No policy with this id.")
        return VehicleCoverage.objects.filter(policy=policy).select_related(
            "vehicle",
            "vehicle__client",
            "vehicle__unit_type",
            "vehicle__make",
            "vehicle__license_plate_state",
            "vehicle__lienholder",
            "vehicle__created_by",
            "vehicle__updated_by",
        )
