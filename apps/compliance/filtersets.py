"""Requirement profile list filters."""

from __future__ import annotations

import django_filters

from apps.compliance.models import RequirementProfile
from apps.core.filters import IdFilter, ListFilterSet, StrictBooleanFilter


class RequirementProfileFilterSet(ListFilterSet):
    agencyId = IdFilter(field_name="agency_id")
    code = django_filters.CharFilter(field_name="code", lookup_expr="iexact")
    builtIn = StrictBooleanFilter(field_name="built_in")

    class Meta:
        model = RequirementProfile
        fields = []
