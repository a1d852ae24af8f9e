"""A caller that acts for no agency (staff with permissions and no membership) is told so when
a create would take its only agency, not that it acts for several."""

from __future__ import annotations

import pytest

from tests.compliance.test_profiles import SHIPPER
from tests.conftest import assert_problem
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
NO_AGENCY = "You act for no agency: a membership of one is needed first."


@pytest.fixture
def unattached(make_api, groups):
    """Staff with the managers' permissions and no membership."""
    user = UserFactory(username="unattached", agencies=[], groups=[groups[0]], is_staff=True)
    return make_api(user)


@pytest.mark.parametrize(
    "path, body",
    [
        ("/v1/webhooks", {"url": "https://hooks.example.com/in"}),
        ("/v1/requirement-profiles", SHIPPER),
    ],
)
def test_a_create_by_a_caller_of_no_agency_says_it_acts_for_none(unattached, path, body):
    problem = assert_problem(unattached.post(path, body, format="json"), 400)
    assert problem["errors"] == [{"field": "agencyId", "message": NO_AGENCY, "code": "invalid"}]
    assert "several" not in problem["detail"]


def test_a_caller_of_several_agencies_is_still_asked_to_name_one(
    make_api, groups, agency, other_agency
):
    both = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    body = {"url": "https://hooks.example.com/in"}
    problem = assert_problem(make_api(both).post("/v1/webhooks", body, format="json"), 400)
    assert problem["detail"] == "agencyId: Name the agency: you act for several."
