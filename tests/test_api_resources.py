"""Every router resource of /v1, declared once against the generic API cases."""

from __future__ import annotations

import pytest

from apps.compliance.models import RequirementProfile
from apps.webhooks.models import Webhook
from tests.api_cases import APIResourceCases
from tests.factories import ClientFactory, DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db


class TestClients(APIResourceCases):
    path = "/v1/clients"

    def make(self, agency):
        return ClientFactory(agency=agency)

    def create_body(self, agency):
        return {"clientName": "Declared Freight LLC", "dot": "4455667", "agencyId": agency.id}

    def update_body(self):
        return {"clientName": "Renamed Freight LLC", "phone": "512-555-0100"}


class TestPolicies(APIResourceCases):
    path = "/v1/policies"

    def make(self, agency):
        return PolicyFactory(client=ClientFactory(agency=agency))

    def create_body(self, agency):
        return {
            "clientId": ClientFactory(agency=agency).id,
            "coverageType": "AL",
            "effectiveDate": "2026-01-01",
            "expirationDate": "2027-01-01",
            "policyNumber": "DECL-001",
        }

    def update_body(self):
        return {"policyNumber": "DECL-002", "premium": "12500.00"}


class TestVehicles(APIResourceCases):
    path = "/v1/vehicles"

    def make(self, agency):
        return VehicleFactory(client=ClientFactory(agency=agency))

    def create_body(self, agency):
        return {
            "clientId": ClientFactory(agency=agency).id,
            "unit": "501",
            "unitTypeName": "Tractor",
            "modelYear": 2022,
            "makeCompanyName": "Volvo",
            "serialNumber": "4V4NC9EH5LN229911",
        }

    def update_body(self):
        return {"unit": "502", "statedValue": "98000.00"}


class TestDrivers(APIResourceCases):
    path = "/v1/drivers"

    def make(self, agency):
        return DriverFactory(client=ClientFactory(agency=agency))

    def create_body(self, agency):
        return {
            "clientId": ClientFactory(agency=agency).id,
            "firstName": "Ana",
            "lastName": "Reyes",
            "driverType": "Company Driver",
        }

    def update_body(self):
        return {"firstName": "Anabel", "licenseNumber": "TX99887766"}


class TestRequirementProfiles(APIResourceCases):
    path = "/v1/requirement-profiles"
    allowed_on_detail = {"GET", "PUT", "DELETE"}

    def make(self, agency):
        return RequirementProfile.objects.create(
            agency=agency,
            name="Declared contract",
            code="declared",
            rules=[{"kind": "federal_minimum"}],
        )

    def create_body(self, agency):
        return {"name": "Shipper contract", "rules": [{"kind": "federal_minimum"}]}

    def update_body(self):
        return {"name": "Renamed contract"}


class TestWebhooks(APIResourceCases):
    path = "/v1/webhooks"
    allowed_on_detail = {"GET", "PUT", "DELETE"}
    shown_once = {"secret"}

    @pytest.fixture(autouse=True)
    def _local_receivers_allowed(self, settings):
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True

    def make(self, agency):
        return Webhook.objects.create(agency=agency, url="http://127.0.0.1:9/hook", secret="x")

    def create_body(self, agency):
        return {"url": "http://127.0.0.1:9/declared", "eventTypes": ["client.created"]}

    def update_body(self):
        return {"description": "ops on call", "eventTypes": ["policy.created"]}
