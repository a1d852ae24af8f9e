"""Vehicle list filters (contract section 7), shared by every vehicle list."""

from __future__ import annotations

import django_filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework.exceptions import ValidationError

from apps.core.filters import (
    DeletedFilterSet,
    IdFilter,
    MoneyFilter,
    UpperChoiceFilter,
)
from apps.core.identifiers import normalize_vin
from apps.core.params import ascii_int, is_ascii_int
from apps.vehicles.choices import VehicleStatus
from apps.vehicles.models import Vehicle


class MakeFilter(django_filters.CharFilter):
    """A make by name (any case) or by id."""

    def filter(self, qs, value):
        if value in (None, ""):
            return qs
        value = value.strip()
        if is_ascii_int(value):
            # An id: out of the column's range is a 400, not a database overflow (500).
            make_id = ascii_int(value, field="make")
            return qs.filter(**{f"{self.field_name}_id": make_id})
        return qs.filter(**{f"{self.field_name}__name_key": value.lower()})


class VehicleFilterSet(DeletedFilterSet):
    vin = django_filters.CharFilter(method="filter_vin")
    unit = django_filters.CharFilter(field_name="unit", lookup_expr="iexact")
    make = MakeFilter(field_name="make")
    owner = django_filters.CharFilter(field_name="owner", lookup_expr="icontains")
    garagingAddress = django_filters.CharFilter(
        field_name="garaging_address", lookup_expr="icontains"
    )
    minValue = MoneyFilter(field_name="stated_value", lookup_expr="gte")
    maxValue = MoneyFilter(field_name="stated_value", lookup_expr="lte")
    status = UpperChoiceFilter(field_name="status", choices=VehicleStatus.values)
    clientId = IdFilter(field_name="client_id")
    policyId = IdFilter(method="filter_policy")

    class Meta:
        model = Vehicle
        fields = []

    def filter_vin(self, queryset, name, value):
        value = normalize_vin(value)  # beyond ASCII as sent: it begins no VIN
        if not value:
            return queryset
        if len(value) > 17:
            raise ValidationError({"vin": ["A VIN has at most 17 characters."]})
        if len(value) == 17:
            return queryset.filter(serial_number=value)
        return queryset.filter(serial_number__startswith=value)

    def filter_policy(self, queryset, name, value):
        return queryset.filter(coverages__policy_id=value).distinct()


@extend_schema_field(OpenApiTypes.INT)
class CoverageStatusFilter(django_filters.TypedChoiceFilter):
    """The coverage status of the vehicle's latest period (an annotation, not a column)."""


class PolicyVehicleFilterSet(DeletedFilterSet):
    """Filters over the vehicle and over its latest period on the policy; a deleted vehicle is
    left out unless `deleted` asks for it, as on every vehicle list (`DeletedFilterSet`)."""

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
