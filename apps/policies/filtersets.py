"""Policy list filters, shared by GET /v1/policies and the legacy POST search."""

from __future__ import annotations

import operator
from functools import reduce

import django_filters
from django.db.models import Q

from apps.clients.models import Client
from apps.core.filters import DeletedFilterSet, IdFilter, UpperChoiceFilter
from apps.core.identifiers import dot_or_none
from apps.masterdata.lookup import MasterDataFilter
from apps.masterdata.models import CoverageType, Insurer
from apps.policies.choices import PolicyStatus
from apps.policies.models import Policy

# At most this many clients (and insurers) named by a policies' search are sent as a list of
# ids; past it, the search joins the policy to them instead.
MANY_CLIENTS = 500
MANY_INSURERS = 500


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
        # Conditions on the policy's own columns only, so PostgreSQL can OR three index
        # reads: its number (a trigram index, policies 0008), its client among the clients so
        # named or of that DOT, its insurer among the insurers so named (both lists read first,
        # from the names' trigram index, the DOT's b-tree and the short list of insurers).
        # Joined to the client and the insurer, the OR tested every policy of the agency
        # through both joins (36-44 ms on the bench's 20,200; now 0.3-2.6 ms for a search that
        # names a few). A word that more than MANY_CLIENTS clients' names hold is looked for
        # through the join to the client, as before: such a search matches most policies, so
        # walking the list's order finds a page at once (the count is cached), where a list of
        # thousands of ids, or a subquery hashing them, cost 8-16 ms before the first row
        # (issue 18).
        # The caller's agencies' clients only (the queryset's scope; all of them, deleted or
        # not, as the join read them): other agencies' clients don't count.
        clients = Client.objects.for_agencies(getattr(queryset, "agency_ids", None))
        by_client = {"client_name__icontains": value}
        dot = dot_or_none(value)  # as stored: 02345678 finds 2345678 (contract 13)
        if dot is not None:
            by_client["dot"] = dot
        return queryset.filter(
            Q(policy_number__icontains=value)
            | _among("client", clients, by_client, MANY_CLIENTS)
            | _among("insurer", Insurer._base_manager, {"name__icontains": value}, MANY_INSURERS)
        )


def _any(lookups: dict) -> Q:
    """Any of these lookups."""
    return reduce(operator.or_, (Q(**{lookup: value}) for lookup, value in lookups.items()))


def _among(relation: str, records, lookups: dict, many: int) -> Q:
    """The policy's `relation` among the `records` any of `lookups` finds: as a list of their
    ids while at most `many` are found, else through the join to them (the same lookups)."""
    found = records.filter(_any(lookups)).order_by().values_list("pk", flat=True)
    found = list(found[: many + 1])
    if len(found) <= many:
        return Q(**{f"{relation}_id__in_list": found})
    return _any({f"{relation}__{lookup}": value for lookup, value in lookups.items()})
