from __future__ import annotations

import django_filters
from django.db.models import Exists, F, OuterRef, Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
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
from apps.vehicles.models import Vehicle
from apps.vehicles.selectors import VEHICLE_RELATIONS


@extend_schema_field(OpenApiTypes.INT)
class CoverageStatusFilter(django_filters.TypedChoiceFilter):
    """The coverage status of the vehicle's latest period (an annotation, not a column)."""


class PolicyVehicleFilterSet(django_filters.FilterSet):
    """Filters over the vehicle and over its latest period on the policy."""

    make = MakeFilter(field_name="make")
    minValue = MoneyFilter(field_name="stated_value", lookup_expr="gte")
    maxValue = MoneyFilter(field_name="stated_value", lookup_expr="lte")
    status = CoverageStatusFilter(
        field_name="coverage_status",
        choices=[(v, str(v)) for v in (1, 2, 4)],
        coerce=int,
    )

    class Meta:
        model = Vehicle
        fields = []


class PolicyVehicleSerializer(VehicleSerializer):
    """A vehicle of the policy (contract section 13): the fields of `GET /v1/vehicles` plus
    its latest period on this policy."""

    assignment_id = serializers.IntegerField(read_only=True)
    coverage_status = serializers.IntegerField(read_only=True)
    coverage_status_name = serializers.SerializerMethodField()
    policy_added_date = serializers.DateField(read_only=True)
    policy_removed_date = serializers.DateField(read_only=True, allow_null=True)

    class Meta(VehicleSerializer.Meta):
        fields = [
            *(name for name in VehicleSerializer.Meta.fields if name != "make"),
            "assignment_id",
            "coverage_status",
            "coverage_status_name",
            "policy_added_date",
            "policy_removed_date",
            "make",  # last, where the list has always shown it
        ]

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
    """The vehicles scheduled on a policy, each once with its latest period on it.

    The spec promises "paginated vehicles of the policy": an item is the vehicle (its `id` is
    the vehicle's), not a scheduling period; a unit removed and scheduled again appears once,
    with the period that began last. Status filters and sorts apply to that period.
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
        "make": "make__name",
        "value": "stated_value",
        "minValue": "stated_value",
        "maxValue": "stated_value",
        "vin": "serial_number",
    }
    default_sort = ("policy_added_date",)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Vehicle.objects.none()
        policy = policy_queryset(user=self.request.user).filter(pk=self.kwargs["pk"]).first()
        if policy is None:
            raise NotFound("No policy with this id.")
        # Each vehicle once, joined to its latest period on the policy: the one no later period
        # (by added date, then id) follows. One filter() call, so the anti-join's OuterRefs use
        # the same join; ordered by the period's added date and the vehicle id, page 1 of a
        # 250,000-unit policy walks coverages_vpolicy_vehicle_idx and stops after 25 rows.
        added = OuterRef("coverages__policy_added_date")
        later = VehicleCoverage.objects.filter(policy=policy, vehicle=OuterRef("pk")).filter(
            Q(policy_added_date__gt=added)
            | Q(policy_added_date=added, id__gt=OuterRef("coverages__id"))
        )
        return (
            Vehicle.objects.filter(Q(coverages__policy=policy), ~Exists(later))
            .select_related(*VEHICLE_RELATIONS)
            .annotate(
                assignment_id=F("coverages__id"),
                coverage_status=F("coverages__coverage_status"),
                policy_added_date=F("coverages__policy_added_date"),
                policy_removed_date=F("coverages__policy_removed_date"),
            )
        )
