"""Requirement profiles in the back-office: scoped by agency, written through the services."""

from __future__ import annotations

import json

import pytest

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
