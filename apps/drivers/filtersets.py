"""Driver list filters (contract section 7), shared by the GET list and the legacy search."""

from __future__ import annotations

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import Q

from apps.core.filters import IdFilter, ListFilterSet, UpperChoiceFilter
from apps.drivers.choices import DriverStatus
from apps.drivers.models import Driver, normalize_license_number
from apps.masterdata.lookup import MasterDataFilter
from apps.masterdata.models import State

# Each word of `q` is one more condition (`filter_q`); about a thousand overflowed SQLite's
# expression depth. No driver's name, email and licence have more words than this.
MAX_SEARCH_WORDS = 20


def at_most_search_words(value: str) -> None:
    if len(value.split()) > MAX_SEARCH_WORDS:
        raise ValidationError(f"At most {MAX_SEARCH_WORDS} words.", code="max_words")


class DriverFilterSet(ListFilterSet):
    clientId = IdFilter(field_name="client_id")
    status = UpperChoiceFilter(field_name="status", choices=DriverStatus.values)
    licenseNumber = django_filters.CharFilter(method="filter_license_number")
    licenseState = MasterDataFilter(State, field_name="license_state")
    q = django_filters.CharFilter(method="filter_q", validators=[at_most_search_words])

    class Meta:
        model = Driver
        fields = []

    def filter_license_number(self, queryset, name, value):
        return queryset.filter(license_number=normalize_license_number(value))

    def filter_q(self, queryset, name, value):
        # Each word in a name or the email (trigram indexes of each, drivers 0007) or the
        # whole licence number, compared as stored (normalized by `normalize_license_number` on
        # every write, so its b-tree serves it; it finds what `iexact` found, and also a
        # licence whose upper case Python spells otherwise than PostgreSQL, such as "ß" ->
        # "SS"): PostgreSQL ORs the four index reads instead of reading every driver of the
        # agency (49,600 on the bench: 31-37 ms -> 1.5-3 ms for a count; issue 18).
        query = Q()
        for word in value.split():
            query &= (
                Q(first_name__icontains=word)
                | Q(last_name__icontains=word)
                | Q(license_number=normalize_license_number(word))
                | Q(email__icontains=word)
            )
        return queryset.filter(query)
