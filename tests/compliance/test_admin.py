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
    assert "Rule 2: Unknown coverage type 'ZZ'." in page
