"""One field sent under two spellings in a JSON body (`minimumLimit` and `minimum_limit`, both
read as `minimum_limit`) is a 400 naming it (in camelCase, as every error does), code
`repeated`, as a form field sent twice, and nothing is written: the camel-case parser kept
whichever key came last, so a requirement profile stored the minimum the caller did not mean
when the keys' order changed."""

from __future__ import annotations

import io

import pytest
from rest_framework.exceptions import ValidationError

from apps.clients.models import Client
from apps.compliance.models import RequirementProfile
from apps.core.parsers import BoundedCamelCaseJSONParser
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db


def refused(response) -> list[tuple[str, str, str]]:
    return [(e["field"], e["message"], e["code"]) for e in assert_problem(response, 400)["errors"]]


@pytest.mark.parametrize(
    "rule",
    [
        {"kind": "coverage", "coverageType": "AL", "minimumLimit": "5.00", "minimum_limit": "7.00"},
        {"kind": "coverage", "coverageType": "AL", "minimum_limit": "7.00", "minimumLimit": "5.00"},
    ],
)
def test_a_profile_rule_with_the_minimum_twice_is_400_and_nothing_is_stored(api, rule):
    before = RequirementProfile.objects.count()
    response = api.post("/v1/requirement-profiles", {"name": "x", "rules": [rule]}, format="json")

    assert refused(response) == [("rules.0.minimumLimit", "Send this field once.", "repeated")]
    assert RequirementProfile.objects.count() == before


def test_a_top_level_field_twice_is_400_and_nothing_is_created(api, agency):
    before = Client.objects.count()
    body = {"name": "Twice LLC", "dot": "5550101", "agencyId": agency.id, "agency_id": agency.id}
    response = api.post("/v1/clients", body, format="json")

    assert refused(response) == [("agencyId", "Send this field once.", "repeated")]
    assert Client.objects.count() == before


def test_the_path_names_lists_and_objects_on_the_way():
    body = b'{"a": [{"b": 1}, {"c": {"dKey": 1, "d_key": 2}}]}'
    with pytest.raises(ValidationError) as error:
        BoundedCamelCaseJSONParser().parse(io.BytesIO(body), "application/json", {})
    assert list(error.value.detail) == ["a.1.c.dKey"]


def test_one_spelling_of_each_field_is_taken_as_before(api):
    rule = {"kind": "coverage", "coverageType": "AL", "minimum_limit": "7.00"}
    response = api.post("/v1/requirement-profiles", {"name": "y", "rules": [rule]}, format="json")

    assert response.status_code == 201, response.content
    assert response.json()["rules"][0]["minimumLimit"] == "7.00"
