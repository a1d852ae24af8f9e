from __future__ import annotations

from drf_spectacular.utils import extend_schema_view

from apps.core.viewsets import LegacySearchMixin, ScopedViewSet, legacy_search_schema
from apps.policies.api.serializers import PolicySerializer
from apps.policies.filtersets import PolicyFilterSet
from apps.policies.selectors import policy_queryset
from apps.policies.services import policy_create, policy_update


@extend_schema_view(
    search=legacy_search_schema(PolicySerializer, "PolicySearchPage"),
)
class PolicyViewSet(LegacySearchMixin, ScopedViewSet):
    """Policies of the caller's agencies."""

    selector = staticmethod(policy_queryset)
    serializer_class = PolicySerializer
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
    }
