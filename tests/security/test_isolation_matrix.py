"""The isolation matrix, generated from the URL configuration so a new route cannot escape it.

For every /v1 route and method: no credentials is 401; a user of the right agency without the
permission is 403; a user of another agency learns nothing (404, an empty list, a 400 on the
reference it named, or NOT_FOUND entries), and nothing is written.
"""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from apps.certificates.numbers import certificate_number
from apps.core.dates import today
from apps.documents.models import Document, Module
from apps.documents.services import document_upload
from apps.masterdata.models import CoverageType
from apps.reports.services import premium_report_create
from tests.factories import (
    ClientFactory,
    DriverFactory,
    LienholderFactory,
    PolicyFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db
NOT_BEARER = {"auth-token", "auth-token-refresh"}  # the apiKey alone; tested in test_auth


def v1_routes() -> set[str]:
    names: set[str] = set()

    def walk(patterns, prefix):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("v1/") and pattern.name:
                names.add(pattern.name)

    walk(get_resolver().url_patterns, "")
    return names - {"schema", "swagger-ui"}


@pytest.fixture
def rival_world(other_agency, other_manager):
    """Everything that can be named, all of it in the other agency."""
    client = ClientFactory(agency=other_agency, dot="7654321")
    policy = PolicyFactory(client=client)
    oa_policy = PolicyFactory(client=client, coverage_type=CoverageType.objects.get(code="OA"))
    vehicle = VehicleFactory(
        client=client, serial_number="4V4NC9EH5LN223344", license_plate="NE-5501R"
    )
    VehicleCoverageFactory(vehicle=vehicle, policy=policy)
    driver = DriverFactory(client=client)
    lienholder = LienholderFactory(agency=other_agency)
    docs = {}
    for module, owner in ((Module.CLIENT, client), (Module.POLICY, policy)):
        file = ContentFile(b"%PDF-1.4 rival", name="rival.pdf")
        docs[module] = document_upload(
            user=other_manager,
            module=module,
            owner_id=owner.id,
            file=file,
            sha256=hashlib.sha256(b"%PDF-1.4 rival").hexdigest(),
        )
    report = premium_report_create(user=None, policy=policy)
    return {
        "client": client,
        "policy": policy,
        "oa_policy": oa_policy,
        "vehicle": vehicle,
        "driver": driver,
        "lienholder": lienholder,
        "docs": docs,
        "report": report,
    }


def upload(field, owner_id):
    return {"file": SimpleUploadedFile("x.pdf", b"%PDF-1.4 x"), field: owner_id}


def cases(w) -> dict[str, list[tuple]]:
    """route -> [(method, path, body, format, outcome for another agency)]."""
    c, p, v, d = w["client"], w["policy"], w["vehicle"], w["driver"]
    on = today().isoformat()
    return {
        "me": [("get", "/v1/me", None, None, "own")],
        "client-list": [
            ("get", f"/v1/clients?agencyId={c.agency_id}", None, None, "empty"),
            ("post", "/v1/clients", {"clientName": "X", "agencyId": c.agency_id}, "json", "403"),
        ],
        "client-detail": [
            ("get", f"/v1/clients/{c.id}", None, None, "404"),
            ("put", f"/v1/clients/{c.id}", {"phone": "1"}, "json", "404"),
        ],
        "policy-list": [
            ("get", f"/v1/policies?clientId={c.id}", None, None, "empty"),
            (
                "post",
                "/v1/policies",
                {
                    "clientId": c.id,
                    "coverageType": "AL",
                    "effectiveDate": on,
                    "expirationDate": "2099-01-01",
                },
                "json",
                "400",
            ),
        ],
        "policy-detail": [
            ("get", f"/v1/policies/{p.id}", None, None, "404"),
            ("put", f"/v1/policies/{p.id}", {"premium": "1"}, "json", "404"),
        ],
        "policy-search": [
            ("post", "/v1/policies/search", {"filter": {"clientId": c.id}}, "json", "empty"),
        ],
        "policy-vehicles": [("get", f"/v1/policies/{p.id}/vehicles", None, None, "404")],
        "vehicle-list": [
            ("get", f"/v1/vehicles?clientId={c.id}", None, None, "empty"),
            (
                "post",
                "/v1/vehicles",
                {
                    "clientId": c.id,
                    "unit": "1",
                    "unitType": "Tractor",
                    "modelYear": 2020,
                    "makes": "Mack",
                    "serialNumber": "1FUJGLDR7CLBP8834",
                },
                "json",
                "400",
            ),
        ],
        "vehicle-detail": [
            ("get", f"/v1/vehicles/{v.id}", None, None, "404"),
            ("put", f"/v1/vehicles/{v.id}", {"unit": "x"}, "json", "404"),
        ],
        "lienholder-detail": [
            ("get", f"/v1/vehicles/lienholders/{w['lienholder'].id}", None, None, "404"),
        ],
        "driver-list": [
            ("get", f"/v1/drivers?clientId={c.id}", None, None, "empty"),
            (
                "post",
                "/v1/drivers",
                {
                    "clientId": c.id,
                    "firstName": "A",
                    "lastName": "B",
                    "driverType": "Company Driver",
                },
                "json",
                "400",
            ),
        ],
        "driver-detail": [
            ("get", f"/v1/drivers/{d.id}", None, None, "404"),
            ("put", f"/v1/drivers/{d.id}", {"firstName": "x"}, "json", "404"),
        ],
        "driver-search": [
            ("post", "/v1/drivers/search", {"filter": {"clientId": c.id}}, "json", "empty"),
        ],
        "driver-vehicles": [
            ("post", "/v1/drivers/vehicles", {"vehicleId": v.id, "driverId": d.id}, "json", "400"),
        ],
        "vehicle-coverages": [
            (
                "post",
                "/v1/vehicles/coverages",
                {"vehicleId": v.id, "policyId": p.id, "policyAddedDate": on},
                "json",
                "400",
            ),
            (
                "put",
                "/v1/vehicles/coverages",
                {"vehicleId": v.id, "policyId": p.id, "coverageStatus": 1},
                "json",
                "400",  # named as POST names them (was 404)
            ),
        ],
        "driver-coverages": [
            (
                "post",
                "/v1/drivers/coverages",
                {"driverId": d.id, "policyId": w["oa_policy"].id, "policyAddedDate": on},
                "json",
                "400",
            ),
            (
                "put",
                "/v1/drivers/coverages",
                {"driverId": d.id, "policyId": w["oa_policy"].id, "coverageStatus": 1},
                "json",
                "400",  # named as POST names them (was 404)
            ),
        ],
        "verify-clients": [
            ("get", f"/v1/coverages/clients?dot={c.dot}", None, None, "404"),
            ("get", f"/v1/coverages/clients?id={c.id}", None, None, "404"),
        ],
        "verify-vehicles": [
            ("get", f"/v1/coverages/vehicles?vin={v.serial_number}", None, None, "404"),
            ("get", f"/v1/coverages/vehicles?licensePlate={v.license_plate}", None, None, "404"),
        ],
        "verify-fleet": [
            (
                "post",
                "/v1/coverages/vehicles/batch",
                {"vins": [v.serial_number]},
                "json",
                "not_found_entries",
            ),
        ],
        "certificate-client": [
            ("get", f"/v1/certificates/clients?id={c.id}", None, None, "404"),
        ],
        "certificate-vehicle": [
            ("get", f"/v1/certificates/vehicles?vin={v.serial_number}", None, None, "404"),
        ],
        "certificate-check": [
            (
                "get",
                f"/v1/certificates/{certificate_number('C', c.id, today())}",
                None,
                None,
                "404",
            ),
        ],
        "documents-clients": [
            ("get", f"/v1/documents/clients?clientId={c.id}", None, None, "empty"),
            ("post", "/v1/documents/clients", upload("clientId", c.id), "multipart", "400"),
        ],
        "documents-policies": [
            ("get", f"/v1/documents/policies?policyId={p.id}", None, None, "empty"),
            ("post", "/v1/documents/policies", upload("policyId", p.id), "multipart", "400"),
        ],
        "document-item-client": [
            (
                "put",
                f"/v1/documents/{w['docs'][Module.CLIENT].id}/client",
                {"file": SimpleUploadedFile("y.pdf", b"%PDF-1.4 y")},
                "multipart",
                "404",
            ),
            ("delete", f"/v1/documents/{w['docs'][Module.CLIENT].id}/client", None, None, "404"),
        ],
        "document-item-policy": [
            ("delete", f"/v1/documents/{w['docs'][Module.POLICY].id}/policy", None, None, "404"),
        ],
        "document-download-client": [
            (
                "get",
                f"/v1/documents/{w['docs'][Module.CLIENT].id}/client/download",
                None,
                None,
                "404",
            ),
        ],
        "document-download-policy": [
            (
                "get",
                f"/v1/documents/{w['docs'][Module.POLICY].id}/policy/download",
                None,
                None,
                "404",
            ),
        ],
        "report-raw-data": [("get", f"/v1/reports/{w['report'].id}/raw-data", None, None, "404")],
        "requirement-profile-list": [
            ("get", f"/v1/requirement-profiles?agencyId={c.agency_id}", None, None, "empty"),
            (
                "post",
                "/v1/requirement-profiles",
                {"name": "X", "agencyId": c.agency_id, "rules": [{"kind": "federal_minimum"}]},
                "json",
                "403",
            ),
        ],
        "requirement-profile-detail": [
            ("get", f"/v1/requirement-profiles/{rival_profile(c)}", None, None, "404"),
            ("put", f"/v1/requirement-profiles/{rival_profile(c)}", {"name": "X"}, "json", "404"),
            ("delete", f"/v1/requirement-profiles/{rival_profile(c)}", None, None, "404"),
        ],
        "events": [("get", f"/v1/events?clientId={c.id}", None, None, "no_results")],
        "webhook-list": [
            ("get", "/v1/webhooks", None, None, "empty"),
            (
                "post",
                "/v1/webhooks",
                {"url": "https://93.184.216.34/x", "agencyId": c.agency_id},
                "json",
                "403",
            ),
        ],
        "webhook-detail": [
            ("get", f"/v1/webhooks/{rival_hook(c).pk}", None, None, "404"),
            ("put", f"/v1/webhooks/{rival_hook(c).pk}", {"active": False}, "json", "404"),
            ("delete", f"/v1/webhooks/{rival_hook(c).pk}", None, None, "404"),
        ],
        "webhook-rotate-secret": [
            ("post", f"/v1/webhooks/{rival_hook(c).pk}/rotate-secret", None, None, "404")
        ],
        "webhook-ping": [("post", f"/v1/webhooks/{rival_hook(c).pk}/ping", None, None, "404")],
        "webhook-deliveries": [
            ("get", f"/v1/webhooks/{rival_hook(c).pk}/deliveries", None, None, "404")
        ],
        "webhook-redeliver": [
            (
                "post",
                f"/v1/webhooks/{rival_hook(c).pk}/deliveries/{rival_delivery(c).pk}/redeliver",
                None,
                None,
                "404",
            )
        ],
    }


def rival_hook(client):
    """The other agency's webhook subscription (issue 15)."""
    from apps.webhooks.models import Webhook

    return Webhook.objects.get_or_create(
        agency_id=client.agency_id, url="https://93.184.216.34/rival", defaults={"secret": "x"}
    )[0]


def rival_delivery(client):
    """A delivery of the other agency's subscription."""
    from apps.events.models import Event
    from apps.webhooks.models import WebhookDelivery

    event = Event.objects.filter(agency_id=client.agency_id).order_by("id").first()
    return WebhookDelivery.objects.get_or_create(webhook=rival_hook(client), event=event)[0]


def rival_profile(client) -> int:
    """The other agency's built-in profile (every agency has one)."""
    from apps.compliance.models import RequirementProfile

    return RequirementProfile.objects.get(agency_id=client.agency_id, built_in=True).pk


def call(client: APIClient, method, path, body, fmt):
    if body is None:
        return getattr(client, method)(path)
    if fmt == "multipart":  # a file part is consumed by each request
        body = {
            k: (SimpleUploadedFile(v.name, b"%PDF-1.4 again") if hasattr(v, "read") else v)
            for k, v in body.items()
        }
    return getattr(client, method)(path, body, format=fmt)


def test_every_v1_route_is_in_the_matrix(rival_world):
    assert set(cases(rival_world)) | NOT_BEARER == v1_routes()


def test_no_credentials_is_401_everywhere(rival_world):
    anonymous = APIClient()
    for route, requests in cases(rival_world).items():
        for method, path, body, fmt, _ in requests:
            response = call(anonymous, method, path, body, fmt)
            assert response.status_code == 401, (route, method, path)


def test_missing_permission_is_403_everywhere(rival_world, make_api, powerless):
    api = make_api(powerless)
    for route, requests in cases(rival_world).items():
        for method, path, body, fmt, outcome in requests:
            if outcome == "own":
                continue
            response = call(api, method, path, body, fmt)
            assert response.status_code == 403, (route, method, path, response.content[:200])


def test_another_agency_learns_nothing_and_changes_nothing(rival_world, api):
    before = {
        "documents": list(Document.objects.values_list("id", "deleted", "sha256")),
        "client": rival_world["client"]
        .__class__.objects.filter(pk=rival_world["client"].pk)
        .values()
        .get(),
    }
    for route, requests in cases(rival_world).items():
        for method, path, body, fmt, outcome in requests:
            response = call(api, method, path, body, fmt)
            where = (route, method, path, response.status_code, response.content[:200])
            if outcome == "own":
                assert response.status_code == 200, where
            elif outcome == "empty":
                payload = response.json()
                assert response.status_code == 200, where
                assert payload.get("count", payload.get("totalCount")) == 0, where
            elif outcome == "no_results":
                assert response.status_code == 200, where
                assert response.json()["results"] == [], where
            elif outcome == "not_found_entries":
                assert response.status_code == 200, where
                assert {r["status"] for r in response.json()["results"]} == {"NOT_FOUND"}, where
            else:
                assert response.status_code == int(outcome), where
                assert rival_world["client"].client_name not in response.content.decode()
    assert list(Document.objects.values_list("id", "deleted", "sha256")) == before["documents"]
    assert (
        rival_world["client"].__class__.objects.filter(pk=rival_world["client"].pk).values().get()
        == before["client"]
    )


def test_mass_assignment_never_writes_ids_audit_fields_or_hidden_references(
    api, agency, rival_world
):
    response = api.post(
        "/v1/clients",
        {
            "clientName": "Mass Co",
            "agencyId": agency.id,
            "id": 999999,
            "createdBy": "intruder",
            "createdAt": "2000-01-01T00:00:00Z",
            "deletedAt": "2000-01-01T00:00:00Z",
            "agencyName": "Other Agency",
        },
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["id"] != 999999 and body["createdBy"] == "manager"
    assert body["createdAt"] != "2000-01-01T00:00:00Z" and body["deletedAt"] is None
    assert body["agencyName"] == "Demo Agency"
    mine = body["id"]
    for payload in ({"parentClientId": rival_world["client"].id}, {"producerId": 10**9}):
        assert api.put(f"/v1/clients/{mine}", payload, format="json").status_code == 400
    vehicle = api.post(
        "/v1/vehicles",
        {
            "clientId": mine,
            "unit": "1",
            "unitType": "Tractor",
            "modelYear": 2020,
            "makes": "Mack",
            "serialNumber": "1FUJGLDR7CLBP8834",
        },
        format="json",
    ).json()
    moved = api.put(
        f"/v1/vehicles/{vehicle['id']}",
        {"clientId": rival_world["client"].id, "lienholderId": rival_world["lienholder"].id},
        format="json",
    )
    assert moved.status_code == 400
    assert api.get(f"/v1/vehicles/{vehicle['id']}").json()["clientId"] == mine
