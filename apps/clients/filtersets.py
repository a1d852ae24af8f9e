"""Client list filters, named as the spec names them."""

from __future__ import annotations

import django_filters

from apps.clients.models import CargoClass, Client
from apps.core.filters import DeletedFilterSet, DotFilter, IdFilter, StrictBooleanFilter


class ClientFilterSet(DeletedFilterSet):
    name = django_filters.CharFilter(field_name="client_name", lookup_expr="icontains")
    dot = DotFilter(field_name="dot")
    agencyId = IdFilter(field_name="agency_id")
    producerId = IdFilter(field_name="producer_id")
    parentClientId = IdFilter(field_name="parent_client_id")
    clientTypeId = IdFilter(field_name="client_type_id")
    acordEnabled = StrictBooleanFilter(field_name="acord_enabled")
    cargoClass = django_filters.ChoiceFilter(field_name="cargo_class", choices=CargoClass.choices)

    class Meta:
        model = Client
        fields = []
