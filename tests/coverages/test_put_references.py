"""`PUT /v1/vehicles/coverages` and `PUT /v1/drivers/coverages` name a unit (or driver) and a
policy as `POST` does, and check them the same way (contract section 4): one the caller cannot
see, another agency's or a missing one, is a 400 on its field, as if it did not exist, with the
very answer `POST` gives. They answered 404 "The unit has never been scheduled on this policy."
with no field named; the 404 is now only for a unit and a policy the caller sees that were never
scheduled together."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.masterdata.models import CoverageType
from tests.conftest import assert_problem
from tests.factories import DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
MISSING = 999_999

SUBJECTS = {
    # path, the field naming the unit, its factory, the policy's coverage type, an ending status
    "vehicle": ("/v1/vehicles/coverages", "vehicleId", VehicleFactory, "AL", 1),
    "driver": ("/v1/drivers/coverages", "driverId", DriverFactory, "OA", 1),
}


def error(field: str, noun: str) -> dict:
    message = f"No {noun} with this id."
    return {
        "type": "about:blank",
        "title": "Bad Request",
        "status": 400,
        "detail": f"{field}: {message}",
        "errors": [{"field": field, "message": message, "code": "invalid"}],
    }


@pytest.fixture(params=sorted(SUBJECTS))
def world(request, carrier, rival):
    """Per subject: its path and field, a scheduled pair of the caller's agency, and another
    agency's unit and policy."""
    path, field, factory, code, ending = SUBJECTS[request.param]
    line = CoverageType.objects.get(code=code)
    mine = (factory(client=carrier), PolicyFactory(client=carrier, coverage_type=line))
    theirs = (factory(client=rival), PolicyFactory(client=rival, coverage_type=line))
    return request.param, path, field, ending, mine, theirs


def both_answers(api, path, field, ending, unit_id, policy_id):
    """What POST and PUT answer for these ids."""
    body = {field: unit_id, "policyId": policy_id}
    posted = api.post(path, {**body, "policyAddedDate": today().isoformat()}, format="json")
    put = api.put(path, {**body, "coverageStatus": ending}, format="json")
    return posted, put


@pytest.mark.parametrize("whose", ["another agency's", "missing"])
def test_a_unit_the_caller_cannot_see_is_400_on_its_field_as_post_answers(api, world, whose):
    noun, path, field, ending, (unit, policy), (their_unit, _) = world
    unit_id = their_unit.id if whose == "another agency's" else MISSING

    posted, put = both_answers(api, path, field, ending, unit_id, policy.id)

    assert assert_problem(put, 400) == assert_problem(posted, 400) == error(field, noun)


@pytest.mark.parametrize("whose", ["another agency's", "missing"])
def test_a_policy_the_caller_cannot_see_is_400_on_policy_id_as_post_answers(api, world, whose):
    noun, path, field, ending, (unit, policy), (_, their_policy) = world
    policy_id = their_policy.id if whose == "another agency's" else MISSING

    posted, put = both_answers(api, path, field, ending, unit.id, policy_id)

    assert assert_problem(put, 400) == assert_problem(posted, 400) == error("policyId", "policy")


def test_another_agencys_scheduled_pair_is_400_as_a_missing_one(api, other_api, world):
    """Scheduled by its agency: the caller learns nothing more than of ids that do not exist."""
    noun, path, field, ending, _, (their_unit, their_policy) = world
    scheduled = other_api.post(
        path,
        {field: their_unit.id, "policyId": their_policy.id, "policyAddedDate": today().isoformat()},
        format="json",
    )
    assert scheduled.status_code == 201, scheduled.content

    theirs = api.put(
        path,
        {field: their_unit.id, "policyId": their_policy.id, "coverageStatus": ending},
        format="json",
    )
    missing = api.put(
        path, {field: MISSING, "policyId": MISSING, "coverageStatus": ending}, format="json"
    )

    assert assert_problem(theirs, 400) == assert_problem(missing, 400) == error(field, noun)
    unchanged = other_api.put(
        path,
        {
            field: their_unit.id,
            "policyId": their_policy.id,
            "coverageStatus": ending,
            "policyRemovedDate": (today() + dt.timedelta(days=1)).isoformat(),
        },
        format="json",
    )
    assert unchanged.status_code == 200, unchanged.content  # still open: nothing was changed


def test_a_visible_pair_never_scheduled_together_is_still_404(api, world):
    noun, path, field, ending, (unit, policy), _ = world

    response = api.put(
        path, {field: unit.id, "policyId": policy.id, "coverageStatus": ending}, format="json"
    )

    body = assert_problem(response, 404)
    assert body["detail"] == f"The {'unit' if noun == 'vehicle' else 'driver'} has never been " + (
        "scheduled on this policy."
    )
    assert body["errors"] == []
