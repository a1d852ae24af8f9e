from __future__ import annotations

from apps.clients.api.serializers import ClientSerializer
from apps.clients.filtersets import ClientFilterSet
from apps.clients.selectors import client_queryset
from apps.clients.services import client_create, client_update
from apps.core.viewsets import ScopedViewSet


class ClientViewSet(ScopedViewSet):
    """Clients of the caller's agencies."""

    selector = staticmethod(client_queryset)
    serializer_class = ClientSerializer
    create_service = staticmethod(client_create)
    update_service = staticmethod(client_update)
    filterset_class = ClientFilterSet
    default_sort = ("client_name",)
    sort_fields = {
        "clientName": "client_name",
        "name": "client_name",
        "dot": "dot",
        "agencyId": "agency_id",
        "producerId": "producer_id",
        "parentClientId": "parent_client_id",
        "clientTypeId": "client_type_id",
        "acordEnabled": "acord_enabled",
        "deleted": "deleted",
        "cargoClass": "cargo_class",
    }
