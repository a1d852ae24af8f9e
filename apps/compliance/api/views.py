from __future__ import annotations

from django.db import transaction
from rest_framework import mixins, status
from rest_framework.response import Response

from apps.compliance.api.serializers import RequirementProfileSerializer
from apps.compliance.filtersets import RequirementProfileFilterSet
from apps.compliance.selectors import requirement_profile_queryset
from apps.compliance.services import (
    requirement_profile_create,
    requirement_profile_delete,
    requirement_profile_update,
)
from apps.core.sorting import IgnoringCase
from apps.core.viewsets import ScopedViewSet


class RequirementProfileViewSet(mixins.DestroyModelMixin, ScopedViewSet):
    """Requirement profiles of the caller's agencies (contract section 15)."""

    selector = staticmethod(requirement_profile_queryset)
    serializer_class = RequirementProfileSerializer
    create_service = staticmethod(requirement_profile_create)
    update_service = staticmethod(requirement_profile_update)
    filterset_class = RequirementProfileFilterSet
    http_method_names = ["get", "post", "put", "delete", "head", "options"]
    default_sort = (IgnoringCase("name"),)
    sort_fields = {
        "name": IgnoringCase("name"),
        "code": "code",
        "agencyId": "agency_id",
        "id": "id",
        "builtIn": "built_in",
    }

    def destroy(self, request, *args, **kwargs):
        instance = self.get_object()
        with transaction.atomic():
            requirement_profile_delete(user=request.user, instance=instance)
        return Response(status=status.HTTP_204_NO_CONTENT)
