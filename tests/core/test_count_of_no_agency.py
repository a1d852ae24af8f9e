"""A caller of no agency (a membership removed, contract section 13) gets empty pages, not a
500, when list counts are cached (production: LIST_COUNT_CACHE_SECONDS with Redis): the count's
cache key compiled the SQL of the rows, and Django compiles none for the empty agency scope
(`IN ()`, EmptyResultSet). Found on two production nodes after a membership was deleted."""

from __future__ import annotations

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LISTS = [
    "/v1/clients",
    "/v1/policies",
    "/v1/vehicles",
    "/v1/drivers",
    "/v1/requirement-profiles",
    "/v1/webhooks",
    "/v1/policies?clientId=1",
    "/v1/documents/clients?clientId=1",
]


@pytest.fixture
def no_agency_api(make_api, groups):
    return make_api(UserFactory(username="left", agencies=[], groups=[groups[0]]))


@pytest.mark.parametrize("cached", [30, 0], ids=["counts cached", "counts live"])
@pytest.mark.parametrize("path", LISTS)
def test_a_caller_of_no_agency_gets_an_empty_page(no_agency_api, carrier, settings, path, cached):
    settings.LIST_COUNT_CACHE_SECONDS = cached
    response = no_agency_api.get(path)

    assert response.status_code == 200, response.content
    assert response.json()["count"] == 0
    assert response.json()["results"] == []
