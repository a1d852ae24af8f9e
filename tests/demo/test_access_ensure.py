"""The demo's and the benchmark's seeds find their agencies and API keys, or create them
through the services, by one rule each (apps/demo/access.py)."""

from __future__ import annotations

import pytest

from apps.accounts.models import ApiKey
from apps.agencies.models import Agency
from apps.compliance.models import RequirementProfile
from apps.demo.access import agency_ensure, api_key_ensure, user_ensure

pytestmark = pytest.mark.django_db


def test_an_agency_is_created_once_through_its_service_then_found():
    root = user_ensure("root", password="pw", superuser=True)
    first = agency_ensure(root, name="Ensured", phone="1-555")
    assert agency_ensure(root, name="Ensured", phone="other") == first
    assert Agency.objects.filter(name="Ensured").count() == 1
    first.refresh_from_db()
    assert first.phone == "1-555"
    # agency_create's: the agency comes with its built-in federal-minimum profile.
    assert RequirementProfile.objects.filter(agency=first, built_in=True).count() == 1


def test_an_api_key_is_created_once_then_found():
    api_key_ensure(name="One", raw_key="ensure-key")
    api_key_ensure(name="Two", raw_key="ensure-key")
    assert list(ApiKey.objects.filter(name__in=["One", "Two"]).values_list("name", flat=True)) == [
        "One"
    ]
