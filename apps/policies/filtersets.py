"""Policy list filters, shared by GET /v1/policies and the legacy POST search."""

from __future__ import annotations

import django_filters
from django.db.models import Q

from apps.core.filters import DeletedFilterSet, IdFilter, UpperChoiceFilter
from apps.masterdata.lookup import MasterDataFilter
from apps.masterdata.models import CoverageType
from apps.policies.choices import PolicyStatus
from apps.policies.models import Policy


class PolicyFilterSet(DeletedFilterSet):
    q = django_filters.CharFilter(method="filter_q")
    policy = django_filters.CharFilter(field_name="policy_number", lookup_expr="iexact")
    clientId = IdFilter(field_name="client_id")
    status = UpperChoiceFilter(field_name="status", choices=PolicyStatus.values)
    coverageType = MasterDataFilter(CoverageType, field_name="coverage_type")

    class Meta:
        model = Policy
        fields = []

    def filter_q(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(
            Q(policy_number__icontains=value)
            | Q(client__client_name__icontains=value)
            | Q(insurer__name__icontains=value)
            | Q(client__dot=value)
        )
