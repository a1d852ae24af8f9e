"""Paging machinery: deferred join, reverse reads past the middle, cached counts."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import transaction

from apps.clients.models import Client
from apps.core import counting
from apps.core.pagination import Page
from tests.factories import ClientFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "ordering",
    [("client_name", "id"), ("-client_name", "id"), ("dot", "-id"), ("-acord_enabled", "id")],
)
def test_every_page_matches_plain_slicing(agency, ordering):
    for n in range(13):
        ClientFactory(
            agency=agency,
            client_name=f"C{n % 4}",
            dot=None if n % 5 == 0 else str(100 + n),
            acord_enabled=n % 3 == 0,
        )
    queryset = Client.objects.order_by(*ordering)
    expected = list(queryset.values_list("pk", flat=True))
    for limit in (1, 4, 5, 13, 20):
        seen = []
        for page in range(1, len(expected) // limit + 3):
            rows = Page(queryset, page=page, limit=limit).rows
            assert [r.pk for r in rows] == expected[(page - 1) * limit : page * limit]
            seen += [r.pk for r in rows]
        assert seen == expected


def test_cached_counts_never_outlive_a_write(api, agency, settings):
    settings.LIST_COUNT_CACHE_SECONDS = 30
    ClientFactory(agency=agency)
    assert api.get("/v1/clients").json()["count"] == 1
    assert api.get("/v1/clients").json()["count"] == 1  # served from the cache
    api.post("/v1/clients", {"clientName": "New", "agencyId": agency.id}, format="json")
    assert api.get("/v1/clients").json()["count"] == 2
    client = Client.objects.get(client_name="New")
    api.put(f"/v1/clients/{client.pk}", {"deleted": True}, format="json")
    assert api.get("/v1/clients").json()["count"] == 1


def test_cached_count_is_used(api, agency, settings, django_assert_num_queries):
    settings.LIST_COUNT_CACHE_SECONDS = 30
    ClientFactory(agency=agency)
    api.get("/v1/clients")
    # auth (1: key, user and agencies; permissions from the cache), ids, rows, no count
    with django_assert_num_queries(3):
        api.get("/v1/clients")


def test_a_cached_count_is_keyed_by_the_rows_counted_not_their_relations(
    agency, other_agency, settings, django_assert_num_queries
):
    settings.LIST_COUNT_CACHE_SECONDS = 30
    ClientFactory(agency=agency)
    ours = Client.objects.filter(agency=agency)
    with django_assert_num_queries(1):
        assert counting.count(ours.select_related("agency", "producer").order_by("dot")) == 1
    with django_assert_num_queries(0):  # the same rows: the same key, whatever is joined to them
        assert counting.count(ours) == 1
    with django_assert_num_queries(1):  # other rows: a key of their own
        assert counting.count(Client.objects.filter(agency=other_agency)) == 0


def test_cached_counts_of_every_list_move_with_its_writes(api, settings):
    # Requirement profiles were left out of the counted apps: a 201 left the count at 1 for
    # the cache's lifetime. Webhook subscriptions are not counted apps: counted live.
    settings.LIST_COUNT_CACHE_SECONDS = 30
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    for url, body in (
        ("/v1/requirement-profiles", {"name": "Shipper", "rules": [{"kind": "federal_minimum"}]}),
        ("/v1/webhooks", {"url": "http://127.0.0.1:9/hook"}),
    ):
        before = api.get(url).json()["count"]
        assert api.get(url).json()["count"] == before
        assert api.post(url, body, format="json").status_code == 201
        assert api.get(url).json()["count"] == before + 1, url


def test_a_count_read_before_a_write_commits_is_not_kept(
    agency, settings, django_capture_on_commit_callbacks
):
    # Another connection may count between the write and its commit and cache the old count
    # under the version the write moved to: the commit moves the version again.
    settings.LIST_COUNT_CACHE_SECONDS = 30
    queryset = Client.objects.filter(agency=agency)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        ClientFactory(agency=agency)
        cache.set(counting.cache_key(queryset), 0, 30)  # the other reader
        assert counting.count(queryset) == 0
    assert counting.count(queryset) == 1
