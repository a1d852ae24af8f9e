"""Policy list filters, shared by GET /v1/policies and the legacy POST search."""

from __future__ import annotations

import django_filters
from django.db.models import Q
from rest_framework.exceptions import ValidationError

from apps.core.filters import DeletedFilterSet, IdFilter
from apps.masterdata.lookup import MasterDataFilter
from apps.masterdata.models import CoverageType
from apps.policies.choices import PolicyStatus
from apps.policies.models import Policy


class UpperChoiceFilter(django_filters.CharFilter):
    """A choice matched in any case; an unknown value is a 400."""

    def __init__(self, *args, choices, **kwargs):
        self.allowed = {c.upper() for c in choices}
        super().__init__(*args, **kwargs)

    def filter(self, qs, value):
        if value in (None, ""):
            return qs
        value = value.strip().upper()
        if value not in self.allowed:
            raise ValidationError(
                {self.field_name: [f"Must be one of {', '.join(sorted(self.allowed))}."]}
            )
        return qs.filter(**{self.field_name: value})


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
