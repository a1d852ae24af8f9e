"""Requirement profiles in the back-office: scoped by agency, written through the services."""

from __future__ import annotations

import json
from html import unescape

import pytest
from django.contrib.admin import ModelAdmin
from django.contrib.admin.models import DELETION, LogEntry

from apps.compliance.admin import RequirementProfileAdmin
from apps.compliance.models import RequirementProfile
from apps.masterdata.models import Insurer
from tests.admin.formdata import form_data
from tests.conftest import assert_problem, staff_member
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
URL = "/admin/compliance/requirementprofile/"


def _form(agency, rules, name="Shipper contract", code="shipper"):
    return {"agency": agency.pk, "name": name, "code": code, "rules": json.dumps(rules)}


def test_staff_see_only_their_agencys_profiles(client, staff, agency, other_agency):
    theirs = RequirementProfile.objects.create(
        agency=other_agency,
        name="Theirs packet",
        code="theirs",
        rules=[{"kind": "federal_minimum"}],
    )
    client.force_login(staff)
    page = client.get(URL).content.decode()
    assert "Federal minimum (49 CFR 387.9)" in page and "Theirs packet" not in page
    assert client.get(f"{URL}{theirs.pk}/change/").status_code == 302
    assert other_agency.name not in client.get(f"{URL}add/").content.decode()


def test_add_validates_and_normalizes_through_the_service(client, staff, agency):
    client.force_login(staff)
    bad = client.post(f"{URL}add/", _form(agency, [{"kind": "coverage", "coverageType": "ZZ"}]))
    assert bad.status_code == 200 and "Unknown coverage type" in bad.content.decode()
    rules = [{"kind": "coverage", "coverageType": "al", "minimumLimit": "1000000"}]
    assert client.post(f"{URL}add/", _form(agency, rules)).status_code == 302
    profile = RequirementProfile.objects.get(code="shipper")
    assert profile.rules == [
        {
            "kind": "coverage",
            "coverage_type": "AL",
            "minimum_limit": "1000000.00",
            "limit_name": None,
        }
    ]
    assert profile.created_by == staff


def test_built_in_profile_is_read_only(client, staff, agency):
    built_in = RequirementProfile.objects.get(agency=agency, built_in=True)
    client.force_login(staff)
    page = client.get(f"{URL}{built_in.pk}/change/").content.decode()
    assert 'name="rules"' not in page
    assert client.post(f"{URL}{built_in.pk}/delete/", {"post": "yes"}).status_code == 403
    assert RequirementProfile.objects.filter(pk=built_in.pk).exists()


def test_built_in_profile_page_offers_no_save(client, staff, agency):
    # Saving it could only answer "cannot be changed": the page is view-only.
    built_in = RequirementProfile.objects.get(agency=agency, built_in=True)
    custom = RequirementProfile.objects.create(
        agency=agency, name="Shipper", code="shipper", rules=[{"kind": "federal_minimum"}]
    )
    client.force_login(staff)
    page = client.get(f"{URL}{built_in.pk}/change/").content.decode()
    assert 'name="_save"' not in page and 'name="_continue"' not in page
    assert client.post(f"{URL}{built_in.pk}/change/", {"name": "Mine"}).status_code == 403
    assert 'name="_save"' in client.get(f"{URL}{custom.pk}/change/").content.decode()


def test_insurer_rating_is_editable_in_the_list(client, agency):
    admin = UserFactory(username="root")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    insurer = Insurer.objects.create(name="Acme Mutual", naic="12345")
    page = client.get("/admin/masterdata/insurer/?q=Acme").content.decode()
    assert "am_best_rating" in page and "A++ (Superior)" in page
    insurer.refresh_from_db()
    assert insurer.am_best_rating == ""


def _profile_named_by_a_subscription(api, name: str) -> RequirementProfile:
    rules = [{"kind": "coverage", "coverageType": "AL"}]
    created = api.post("/v1/requirement-profiles", {"name": name, "rules": rules}, format="json")
    assert created.status_code == 201, created.content
    subscribed = api.post(
        "/v1/webhooks",
        {
            "url": "https://93.184.216.34/hook",
            "profileId": created.json()["id"],
            "eventTypes": ["compliance.changed"],
        },
        format="json",
    )
    assert subscribed.status_code == 201, subscribed.content
    return RequirementProfile.objects.get(pk=created.json()["id"])


def test_bulk_delete_with_a_profile_in_use_deletes_nothing(client, staff, api, agency):
    unused = RequirementProfile.objects.create(
        agency=agency, name="Aaa unused", code="aaa-unused", rules=[{"kind": "federal_minimum"}]
    )
    in_use = _profile_named_by_a_subscription(api, "Zzz in use")
    client.force_login(staff)
    selection = {"action": "delete_selected", "_selected_action": [unused.pk, in_use.pk]}
    confirmation = client.post(URL, selection)
    assert confirmation.status_code == 200
    page = unescape(confirmation.content.decode())
    assert "https://93.184.216.34/hook" in page and 'name="post"' not in page
    response = client.post(URL, {**selection, "post": "yes"}, follow=True)
    assert response.status_code == 200
    assert set(RequirementProfile.objects.filter(pk__in=[unused.pk, in_use.pk])) == {
        unused,
        in_use,
    }


def test_bulk_delete_refused_meanwhile_is_all_or_nothing(client, staff, api, agency, monkeypatch):
    """A subscription made after the confirmation page was shown: the service refuses, the
    admin says so and the profiles deleted before it in the selection are back."""
    unused = RequirementProfile.objects.create(
        agency=agency, name="Aaa unused", code="aaa-unused", rules=[{"kind": "federal_minimum"}]
    )
    in_use = _profile_named_by_a_subscription(api, "Zzz in use")
    monkeypatch.setattr(RequirementProfileAdmin, "get_deleted_objects", _nothing_in_use)
    client.force_login(staff)
    response = client.post(
        URL,
        {"action": "delete_selected", "_selected_action": [unused.pk, in_use.pk], "post": "yes"},
        follow=True,
    )
    assert response.status_code == 200
    page = unescape(response.content.decode())
    assert "Zzz in use: The profile is in use (a webhook subscription names it)." in page
    assert "Successfully deleted" not in page
    assert RequirementProfile.objects.filter(pk__in=[unused.pk, in_use.pk]).count() == 2
    assert not LogEntry.objects.filter(action_flag=DELETION).exists()


def test_delete_page_of_a_profile_in_use_offers_no_delete(client, staff, api):
    in_use = _profile_named_by_a_subscription(api, "In use")
    client.force_login(staff)
    url = f"{URL}{in_use.pk}/delete/"
    page = unescape(client.get(url).content.decode())
    assert "https://93.184.216.34/hook" in page and 'name="post"' not in page
    assert client.post(url, {"post": "yes"}).status_code == 200
    assert RequirementProfile.objects.filter(pk=in_use.pk).exists()


def test_delete_refused_meanwhile_is_a_message_not_a_500(client, staff, api, monkeypatch):
    in_use = _profile_named_by_a_subscription(api, "In use")
    monkeypatch.setattr(RequirementProfileAdmin, "get_deleted_objects", _nothing_in_use)
    client.force_login(staff)
    response = client.post(f"{URL}{in_use.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert response["Location"] == f"{URL}{in_use.pk}/change/"
    page = unescape(client.get(response["Location"]).content.decode())
    assert "The profile is in use (a webhook subscription names it)." in page
    assert RequirementProfile.objects.filter(pk=in_use.pk).exists()
    assert not LogEntry.objects.filter(action_flag=DELETION).exists()


def _nothing_in_use(self, objs, request):
    return ModelAdmin.get_deleted_objects(self, objs, request)


def test_add_without_a_code_generates_it_as_the_api_does(client, staff, api, agency):
    """The code is optional, as in the API (contract 15): left blank, the create service
    makes it up from the name, numbered as it numbers the API's."""
    rules = [{"kind": "federal_minimum"}]
    by_api = api.post(
        "/v1/requirement-profiles", {"name": "RP admin", "rules": rules}, format="json"
    )
    assert by_api.status_code == 201, by_api.content
    client.force_login(staff)
    response = client.post(f"{URL}add/", _form(agency, rules, name="RP admin", code=""))
    assert response.status_code == 302, unescape(response.content.decode())
    codes = RequirementProfile.objects.filter(name="RP admin").order_by("pk")
    assert [p.code for p in codes] == [by_api.json()["code"], "rp-admin-2"]
    assert by_api.json()["code"] == "rp-admin"


def test_rule_errors_show_without_a_code(client, staff, agency):
    client.force_login(staff)
    bad = [{"kind": "coverage", "coverageType": "ZZ"}]
    response = client.post(f"{URL}add/", _form(agency, bad, name="RP admin", code=""))
    assert response.status_code == 200
    page = unescape(response.content.decode())
    assert "Unknown coverage type" in page
    assert "This field is required." not in page
    assert not RequirementProfile.objects.filter(name="RP admin").exists()


def test_rule_errors_show_beside_a_bad_code(client, staff, agency):
    client.force_login(staff)
    bad = [{"kind": "coverage", "coverageType": "AL"}, {"kind": "coverage", "coverageType": "ZZ"}]
    response = client.post(f"{URL}add/", _form(agency, bad, name="RP admin", code="Not A Code"))
    assert response.status_code == 200
    page = unescape(response.content.decode())
    assert "A code is lower-case letters, digits and dashes" in page
    assert "Rule 2, coverageType: Unknown coverage type 'ZZ'." in page


# --- the rules read as the API reads them ------------------------------------------------


def _api_messages(api, rules_text: str) -> list[str]:
    """What the API answers to a profile with these rules (sent as raw JSON text): a 400's
    messages, each as the problem names it."""
    body = '{"name": "RP door", "rules": ' + rules_text + "}"
    problem = assert_problem(
        api.post("/v1/requirement-profiles", body, content_type="application/json"), 400
    )
    return [e["message"] for e in problem["errors"]] or [problem["detail"]]


@pytest.mark.parametrize(
    ("rules_text", "message"),
    [
        # One property in two spellings: which one was meant is unknown (the admin kept the
        # later one, an AL rule, and dropped MTC).
        (
            '[{"kind": "coverage", "coverageType": "MTC", "coverage_type": "AL"}]',
            "Send this field once.",
        ),
        (
            '[{"kind": "coverage", "coverageType": "AL", "minimum_limit": "1.00", '
            '"minimumLimit": "2.00"}]',
            "Send this field once.",
        ),
        (
            '[{"kind": "federal_minimum"}, {"kind": "expiration_notice", "days": NaN}]',
            "JSON parse error - NaN is not a JSON value (RFC 8259)",
        ),
        ('[{"kind": "coverage", "coverageType": "AL\\u0000"}]', "Text cannot hold the NUL"),
        ("[" * 70 + "]" * 70, "JSON nested deeper than 64 levels is refused."),
        # Where the text breaks is counted in each text (the API's body holds more): the
        # same message, its position aside.
        pytest.param("[{", "JSON parse error - Expecting", id="malformed"),
        (
            '[{"kind": "coverage", "coverageType": "AL", "minimumLimit": 1000000}]',
            'Send money as a decimal string, e.g. "1000000.00".',
        ),
    ],
)
def test_the_admin_refuses_what_the_api_refuses_with_its_message(
    client, staff, agency, api, rules_text, message
):
    api_messages = _api_messages(api, rules_text)
    assert any(message in m for m in api_messages), api_messages
    client.force_login(staff)
    data = {"agency": agency.pk, "name": "RP door", "code": "", "rules": rules_text}
    response = client.post(f"{URL}add/", data)
    assert response.status_code == 200
    page = unescape(response.content.decode())
    assert message in page
    if "Expecting" not in message:
        for api_message in api_messages:
            assert api_message in page, api_message
    # Nothing lost: the rules show as typed, to correct.
    assert rules_text in page
    assert not RequirementProfile.objects.filter(name="RP door").exists()


def test_a_rule_error_names_the_rule_and_its_property_as_the_api_does(client, staff, agency):
    client.force_login(staff)
    rules = (
        '[{"kind": "federal_minimum"}, '
        '{"kind": "coverage", "coverageType": "MTC", "coverage_type": "AL"}]'
    )
    data = {"agency": agency.pk, "name": "RP door", "code": "", "rules": rules}
    page = unescape(client.post(f"{URL}add/", data).content.decode())
    assert "Rule 2, coverageType: Send this field once." in page


def test_the_change_form_shows_the_rules_as_the_api_does_and_takes_both_spellings(
    client, staff, agency, api, groups, other_agency
):
    rules = [
        {"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000.00"},
        {"kind": "expiration_notice", "days": 30},
    ]
    created = api.post("/v1/requirement-profiles", {"name": "Shown", "rules": rules}, format="json")
    assert created.status_code == 201, created.content
    pk, shown_by_api = created.json()["id"], created.json()["rules"]
    client.force_login(staff)
    page = client.get(f"{URL}{pk}/change/").content.decode()
    data = form_data(page)
    assert json.loads(data["rules"]) == shown_by_api
    assert "coverage_type" not in data["rules"] and "minimum_limit" not in data["rules"]
    assert "coverageType" in data["rules"] and "minimumLimit" in data["rules"]
    stored = RequirementProfile.objects.get(pk=pk).rules
    # Saved back as shown: the rules do not change.
    assert client.post(f"{URL}{pk}/change/", {**data, "_save": "Save"}).status_code == 302
    assert RequirementProfile.objects.get(pk=pk).rules == stored
    # snake_case keys are read too, as the API reads them.
    snake_rules = [{"kind": "coverage", "coverage_type": "MTC", "minimum_limit": "100000"}]
    response = client.post(
        f"{URL}{pk}/change/", {**data, "rules": json.dumps(snake_rules), "_save": "Save"}
    )
    assert response.status_code == 302, unescape(response.content.decode())
    assert api.get(f"/v1/requirement-profiles/{pk}").json()["rules"] == [
        {"kind": "coverage", "coverageType": "MTC", "minimumLimit": "100000.00", "limitName": None}
    ]
    # Staff of another agency neither see the rules nor change them.
    client.force_login(staff_member([other_agency], groups, username="rival-staff"))
    assert client.get(f"{URL}{pk}/change/").status_code == 302
    response = client.post(f"{URL}{pk}/change/", {**data, "_save": "Save"})
    assert response.status_code in (302, 403, 404)
    assert RequirementProfile.objects.get(pk=pk).rules[0]["coverage_type"] == "MTC"
