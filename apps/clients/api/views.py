from __future__ import annotations

from apps.clients.api.serializers import ClientSerializer
from apps.clients.filtersets import ClientFilterSet
from apps.clients.selectors import client_queryset
from apps.clients.services import client_create, client_update
from apps.core.sorting import AsNumber, IgnoringCase
from apps.core.viewsets import ScopedViewSet

CLIENT_NAME = IgnoringCase("client_name")  # its index: clients_agency_name_ci_idx


class ClientViewSet(ScopedViewSet):
    """Clients of the caller's agencies."""

    selector = staticmethod(client_queryset)
    serializer_class = ClientSerializer
    create_service = staticmethod(client_create)
    update_service = staticmethod(client_update)
    filterset_class = ClientFilterSet
    default_sort = (CLIENT_NAME,)
    sort_fields = {
        "clientName": CLIENT_NAME,
        "name": CLIENT_NAME,
        "dot": AsNumber("dot"),
        "agencyId": "agency_id",
        "producerId": "producer_id",
        "parentClientId": "parent_client_id",
        "clientTypeId": "client_type_id",
        "acordEnabled": "acord_enabled",
        "deleted": "deleted",
        "cargoClass": "cargo_class",
    }
