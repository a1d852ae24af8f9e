"""The agency's policy list reads the policies' own copy of their client's agency (issue 18):
every sort keeps to the caller's agency, forwards and backwards, in a constant number of
queries; a policy follows its client to another agency."""

from __future__ import annotations

import pytest

from apps.policies.api.views import PolicyViewSet
from tests.factories import ClientFactory, PolicyFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("sort", [*sorted(PolicyViewSet.sort_fields), "-effectiveDate", "id"])
def test_every_sort_of_the_policy_list_keeps_to_the_agency(
    api, other_api, agency, other_agency, sort, django_assert_max_num_queries
):
    ours = [PolicyFactory(client=ClientFactory(agency=agency)) for _ in range(3)]
    theirs = [PolicyFactory(client=ClientFactory(agency=other_agency)) for _ in range(2)]
    for caller, expected in ((api, ours), (other_api, theirs)):
        seen = []
        for page in (1, 2, 3):  # the last pages are read backwards
            with django_assert_max_num_queries(10):
                response = caller.get(f"/v1/policies?sort={sort}&limit=1&page={page}")
            assert response.status_code == 200, response.content
            seen += [row["id"] for row in response.json()["results"]]
        assert sorted(seen) == sorted(p.pk for p in expected)


def test_a_policy_moved_with_its_client_leaves_the_old_agencys_list(
    api, other_api, carrier, other_agency
):
    policy = PolicyFactory(client=carrier)
    assert [row["id"] for row in api.get("/v1/policies").json()["results"]] == [policy.pk]
    carrier.agency = other_agency
    carrier.save()
    assert api.get("/v1/policies").json()["count"] == 0
    assert [row["id"] for row in other_api.get("/v1/policies").json()["results"]] == [policy.pk]
    assert other_api.get(f"/v1/policies/{policy.pk}").status_code == 200
