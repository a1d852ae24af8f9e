"""Requirement profiles over HTTP: contract section 15."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from apps.compliance.models import RequirementProfile
from apps.compliance.services import requirement_profile_create
from tests.conftest import assert_problem
from tests.factories import AgencyFactory, UserFactory

pytestmark = pytest.mark.django_db
URL = "/v1/requirement-profiles"
SHIPPER = {
    "name": "Shipper contract",
    "rules": [
        {
            "kind": "coverage",
            "coverageType": "AL",
            "minimumLimit": "1000000.00",
            "limitName": "Combined Single Limit",
        },
        {"kind": "coverage", "coverageType": "mtc", "minimumLimit": "100000"},
        {"kind": "insurer_rating", "minimum": "a-"},
        {"kind": "additional_insured"},
        {"kind": "waiver_of_subrogation"},
        {"kind": "expiration_notice", "days": 30},
        {"kind": "federal_minimum"},
    ],
}


def _field(body: dict) -> set:
    return {e["field"] for e in body["errors"]}


def test_create_normalizes_rules_and_defaults_code_and_agency(api, agency):
    response = api.post(URL, SHIPPER, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"].endswith(f"{URL}/{body['id']}")
    assert body["name"] == "Shipper contract" and body["code"] == "shipper-contract"
    assert body["agencyId"] == agency.id and body["builtIn"] is False
    assert body["rules"] == [
        {
            "kind": "coverage",
            "coverageType": "AL",
            "minimumLimit": "1000000.00",
            "limitName": "Combined Single Limit",
        },
        {"kind": "coverage", "coverageType": "MTC", "minimumLimit": "100000.00", "limitName": None},
        {"kind": "insurer_rating", "minimum": "A-"},
        {"kind": "additional_insured"},
        {"kind": "waiver_of_subrogation"},
        {"kind": "expiration_notice", "days": 30},
        {"kind": "federal_minimum"},
    ]
    assert api.get(f"{URL}/{body['id']}").json() == body


def test_every_agency_has_its_built_in_federal_minimum(api, agency, other_agency):
    body = api.get(URL).json()
    [built_in] = body["results"]
    assert built_in["code"] == "federal-minimum" and built_in["builtIn"] is True
    assert built_in["agencyId"] == agency.id
    assert built_in["rules"] == [{"kind": "federal_minimum"}]
    fresh = AgencyFactory(name="Fresh Agency")
    assert RequirementProfile.objects.filter(agency=fresh, code="federal-minimum").count() == 1


def test_list_is_paged_and_scoped(api, other_api, agency):
    api.post(URL, SHIPPER, format="json")
    body = api.get(f"{URL}?limit=1&sort=name").json()
    assert body["count"] == 2 and len(body["results"]) == 1
    assert body["results"][0]["code"] == "federal-minimum"
    others = other_api.get(URL).json()["results"]
    assert [p["agencyId"] for p in others] != [agency.id]
    assert all(p["agencyId"] != agency.id for p in others)


def test_put_is_partial_and_revalidates(api):
    pk = api.post(URL, SHIPPER, format="json").json()["id"]
    response = api.put(f"{URL}/{pk}", {"name": "Broker contract"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["name"] == "Broker contract"
    assert len(response.json()["rules"]) == 7
    response = api.put(
        f"{URL}/{pk}", {"rules": [{"kind": "coverage", "coverageType": "GL"}]}, format="json"
    )
    assert response.json()["rules"] == [
        {"kind": "coverage", "coverageType": "GL", "minimumLimit": None, "limitName": None}
    ]
    bad = api.put(f"{URL}/{pk}", {"rules": [{"kind": "nope"}]}, format="json")
    assert _field(assert_problem(bad, 400)) == {"rules.0.kind"}


def test_an_amount_is_kept_as_money_text(api):
    rules = [
        {"kind": "coverage", "coverageType": "AL", "minimumLimit": " 750000 "},
        {"kind": "coverage", "coverageType": "GL", "minimumLimit": "-0"},
    ]
    made = api.post(URL, {"name": "Plain", "rules": rules}, format="json")
    assert made.status_code == 201, made.content
    assert [rule["minimumLimit"] for rule in made.json()["rules"]] == ["750000.00", "0.00"]


def test_delete(api):
    pk = api.post(URL, SHIPPER, format="json").json()["id"]
    assert api.delete(f"{URL}/{pk}").status_code == 204
    assert_problem(api.get(f"{URL}/{pk}"), 404)


def test_a_profile_a_webhook_names_cannot_be_deleted(api, settings):
    # The subscription would watch nothing, and could not be changed without naming another.
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    pk = api.post(URL, SHIPPER, format="json").json()["id"]
    hook = api.post(
        "/v1/webhooks", {"url": "http://127.0.0.1:9/x", "profileId": pk}, format="json"
    ).json()

    refused = assert_problem(api.delete(f"{URL}/{pk}"), 409)
    assert refused["detail"] == "The profile is in use (a webhook subscription names it)."
    assert api.get(f"{URL}/{pk}").status_code == 200
    assert api.delete(f"/v1/webhooks/{hook['id']}").status_code == 204
    assert api.delete(f"{URL}/{pk}").status_code == 204


def test_built_in_profile_cannot_be_changed_or_deleted(api, agency):
    pk = RequirementProfile.objects.get(agency=agency, built_in=True).pk
    assert_problem(api.put(f"{URL}/{pk}", {"name": "Mine"}, format="json"), 409)
    assert_problem(api.delete(f"{URL}/{pk}"), 409)


def test_duplicate_code_in_agency_is_409(api):
    api.post(URL, SHIPPER, format="json")
    assert_problem(api.post(URL, {**SHIPPER, "code": "shipper-contract"}, format="json"), 409)
    assert_problem(api.post(URL, {**SHIPPER, "code": "federal-minimum"}, format="json"), 409)


def test_a_default_code_taken_already_gets_a_number(api):
    """The caller sent no code: the one made from the name never collides (409 is for a code
    the caller chose)."""
    rules = [{"kind": "federal_minimum"}]
    codes = []
    for name in ["!!!", "東京", "Shipper contract", "Shipper contract", "Shipper contract"]:
        response = api.post(URL, {"name": name, "rules": rules}, format="json")
        assert response.status_code == 201, response.content
        codes.append(response.json()["code"])
    assert codes == [
        "profile",
        "profile-2",
        "shipper-contract",
        "shipper-contract-2",
        "shipper-contract-3",
    ]


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("Shipper_Contract", "shipper-contract"),
        ("ACME_2026 rules", "acme-2026-rules"),
        ("__a__b__", "a-b"),
        ("_1_", "profile-1"),
        ("a-_-b", "a-b"),
    ],
)
def test_a_default_code_is_a_code_whatever_the_name_holds(api, name, code):
    """Django's slug keeps underscores, which a code does not take: the name's default code
    was refused, as a 400 on a `code` the caller never sent."""
    response = api.post(URL, {"name": name, "rules": [{"kind": "federal_minimum"}]}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["code"] == code


def test_a_default_code_with_a_number_stays_within_fifty_characters(api):
    name = "A" * 60
    rules = [{"kind": "federal_minimum"}]
    first = api.post(URL, {"name": name, "rules": rules}, format="json").json()["code"]
    second = api.post(URL, {"name": name, "rules": rules}, format="json")
    assert second.status_code == 201, second.content
    assert first == "a" * 50 and second.json()["code"] == "a" * 48 + "-2"


@pytest.mark.parametrize(
    ("rules", "field"),
    [
        ([{"kind": "coverage", "coverageType": "XYZ"}], "rules.0.coverageType"),
        ([{"kind": "coverage"}], "rules.0.coverageType"),
        (
            [{"kind": "coverage", "coverageType": "AL", "minimumLimit": "-1"}],
            "rules.0.minimumLimit",
        ),
        (
            [{"kind": "coverage", "coverageType": "AL", "minimumLimit": "1e"}],
            "rules.0.minimumLimit",
        ),
        (
            [{"kind": "coverage", "coverageType": "AL", "minimumLimit": "1.001"}],
            "rules.0.minimumLimit",
        ),
        (
            [{"kind": "coverage", "coverageType": "AL", "minimumLimit": True}],
            "rules.0.minimumLimit",
        ),
        (
            [{"kind": "coverage", "coverageType": "AL", "minimumLimit": "NaN"}],
            "rules.0.minimumLimit",
        ),
        # Text Python's Decimal reads but no integrator means as money (contract section 6).
        *(
            (
                [{"kind": "coverage", "coverageType": "AL", "minimumLimit": text}],
                "rules.0.minimumLimit",
            )
            for text in ("1e6", "1_000", "\uff11\uff10\uff10", "0x10", ".5", "5.", "")
        ),
        (
            [
                {
                    "kind": "coverage",
                    "coverageType": "APD",
                    "minimumLimit": "1000",
                    "limitName": "Deductible",
                }
            ],
            "rules.0.limitName",
        ),
        (
            [{"kind": "coverage", "coverageType": "AL", "minimumLimit": "1", "limitName": "Big"}],
            "rules.0.limitName",
        ),
        (
            [{"kind": "coverage", "coverageType": "AL", "limitName": "Aggregate"}],
            "rules.0.limitName",
        ),
        (
            [{"kind": "federal_minimum"}, {"kind": "insurer_rating", "minimum": "AAA"}],
            "rules.1.minimum",
        ),
        ([{"kind": "federal_minimum"}, {"kind": "insurer_rating"}], "rules.1.minimum"),
        ([{"kind": "teleport"}], "rules.0.kind"),
        ([{"coverageType": "AL"}], "rules.0.kind"),
        ([{"kind": "federal_minimum"}, {"kind": "expiration_notice", "days": 0}], "rules.1.days"),
        (
            [{"kind": "federal_minimum"}, {"kind": "expiration_notice", "days": "30"}],
            "rules.1.days",
        ),
        ([{"kind": "federal_minimum", "days": 3}], "rules.0"),
        ([{"kind": "federal_minimum"}, {"kind": "federal_minimum"}], "rules.1.kind"),
        (
            [
                {"kind": "coverage", "coverageType": "AL"},
                {"kind": "coverage", "coverageType": "al"},
            ],
            "rules.1.coverageType",
        ),
        ([{"kind": "additional_insured"}], "rules"),
        ([], "rules"),
        ("AL", "rules"),
        (["AL"], "rules.0"),
    ],
)
def test_invalid_rules_are_400_naming_the_rule(api, rules, field):
    body = assert_problem(api.post(URL, {"name": "Bad", "rules": rules}, format="json"), 400)
    assert _field(body) == {field}, body


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"rules": [{"kind": "federal_minimum"}]}, "name"),
        ({"name": "No rules"}, "rules"),
        ({"name": "Digits", "code": "123", "rules": [{"kind": "federal_minimum"}]}, "code"),
        ({"name": "Caps", "code": "Big Code", "rules": [{"kind": "federal_minimum"}]}, "code"),
        ({"name": 5, "rules": [{"kind": "federal_minimum"}]}, "name"),
    ],
)
def test_invalid_profiles_are_400(api, body, field):
    assert _field(assert_problem(api.post(URL, body, format="json"), 400)) == {field}


def test_other_agency_profile_is_404(api, other_api):
    pk = other_api.post(URL, SHIPPER, format="json").json()["id"]
    assert_problem(api.get(f"{URL}/{pk}"), 404)
    assert_problem(api.put(f"{URL}/{pk}", {"name": "Mine"}, format="json"), 404)
    assert_problem(api.delete(f"{URL}/{pk}"), 404)


def test_create_in_another_agency_is_403(api, other_agency):
    body = {**SHIPPER, "agencyId": other_agency.id}
    assert_problem(api.post(URL, body, format="json"), 403)


def test_update_naming_an_agency_not_served_is_403(api, other_agency):
    # Contract section 4: existing or not, as the create and a client's update answer.
    pk = api.post(URL, SHIPPER, format="json").json()["id"]
    for agency_id in (other_agency.id, 999):
        body = {"agencyId": agency_id, "name": "Moved"}
        assert_problem(api.put(f"{URL}/{pk}", body, format="json"), 403)
    assert api.get(f"{URL}/{pk}").json()["name"] == SHIPPER["name"]


def test_update_naming_another_served_agency_is_400(make_api, groups, agency, other_agency):
    both = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    client = make_api(both)
    pk = client.post(URL, {**SHIPPER, "agencyId": agency.id}, format="json").json()["id"]
    body = {"agencyId": other_agency.id}
    assert _field(assert_problem(client.put(f"{URL}/{pk}", body, format="json"), 400)) == {
        "agencyId"
    }


def test_user_of_several_agencies_names_the_agency(make_api, groups, agency, other_agency):
    both = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    client = make_api(both)
    body = assert_problem(client.post(URL, SHIPPER, format="json"), 400)
    assert _field(body) == {"agencyId"}
    created = client.post(URL, {**SHIPPER, "agencyId": other_agency.id}, format="json")
    assert created.status_code == 201 and created.json()["agencyId"] == other_agency.id


def test_permissions(make_api, viewer_api, powerless, api_key):
    assert_problem(make_api().get(URL), 401)
    assert_problem(make_api(powerless).get(URL), 403)
    assert viewer_api.get(URL).status_code == 200
    assert_problem(viewer_api.post(URL, SHIPPER, format="json"), 403)


def test_an_empty_code_is_made_from_the_name_on_create_and_kept_on_update(api):
    """As the admin's blank field: "" is no code chosen, not a 400."""
    created = api.post(URL, {**SHIPPER, "code": ""}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["code"] == "shipper-contract"
    profile_url = f"{URL}/{created.json()['id']}"
    updated = api.put(profile_url, {"name": "Renamed", "code": ""}, format="json")
    assert updated.status_code == 200, updated.content
    assert updated.json()["code"] == "shipper-contract" and updated.json()["name"] == "Renamed"
    for not_a_code in (None, "Has Spaces", 7):
        assert_problem(api.post(URL, {**SHIPPER, "code": not_a_code}, format="json"), 400)


def test_the_service_refuses_a_property_given_in_both_spellings(manager):
    # The API's parser and the admin's form refuse it first; a caller of the service (a seed,
    # a command) gets the same refusal, not whichever spelling came last.
    rules = [{"kind": "coverage", "coverageType": "MTC", "coverage_type": "AL"}]
    with pytest.raises(ValidationError) as refused:
        requirement_profile_create(user=manager, name="Twice", rules=rules)
    assert refused.value.message_dict == {"rules.0.coverage_type": ["Send this field once."]}
    assert not RequirementProfile.objects.filter(name="Twice").exists()
