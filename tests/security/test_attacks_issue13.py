"""Issue 13: each finding of the red team, replayed over HTTP with real credentials.

Every test here failed on the code as it was before the fix it names.
"""

from __future__ import annotations

import re

import pytest
from django.urls import URLResolver, get_resolver, reverse
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from tests.conftest import API_KEY, assert_problem

pytestmark = pytest.mark.django_db


# -- 3. the login throttle's client address ---------------------------------------------------


def _failed_login(client: APIClient, n: int, **headers):
    return client.post(
        "/v1/auth/token",
        {"username": f"nobody-{n}", "password": "wrong"},
        format="json",
        **headers,
    )


def test_spoofed_forwarded_for_does_not_escape_the_address_throttle(api_key, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 3
    client = APIClient()
    client.credentials(HTTP_APIKEY=API_KEY)
    for n in range(3):
        response = _failed_login(client, n, HTTP_X_FORWARDED_FOR=f"10.0.0.{n}")
        assert response.status_code == 401
    # A fresh spoofed address is still the same socket peer: throttled.
    assert_problem(_failed_login(client, 9, HTTP_X_FORWARDED_FOR="10.9.9.9"), 429)


def test_forwarded_for_is_trusted_through_the_configured_proxies_only(api_key, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 2
    settings.TRUSTED_PROXY_COUNT = 1
    client = APIClient()
    client.credentials(HTTP_APIKEY=API_KEY)
    # Our one proxy appended the real client (198.51.100.7); the first hop is the attacker's.
    for n in range(2):
        xff = f"10.0.0.{n}, 198.51.100.7"
        assert _failed_login(client, n, HTTP_X_FORWARDED_FOR=xff).status_code == 401
    assert_problem(_failed_login(client, 5, HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7"), 429)
    # Another real client behind the same proxy is not throttled.
    assert _failed_login(client, 6, HTTP_X_FORWARDED_FOR="198.51.100.8").status_code == 401


# -- 11. refresh token of a deactivated user --------------------------------------------------


def test_refresh_token_of_a_deactivated_user_is_401(make_api, manager):
    client = make_api()
    pair = client.post(
        "/v1/auth/token", {"username": "manager", "password": "secret-password"}, format="json"
    )
    assert pair.status_code == 200, pair.content
    manager.is_active = False
    manager.save(update_fields=["is_active"])
    response = client.post(
        "/v1/auth/token/refresh", {"refresh": pair.json()["refresh"]}, format="json"
    )
    assert_problem(response, 401)


# -- 2. looking a certificate up by its number -------------------------------------------------


@pytest.fixture
def issued(api, carrier):
    from tests.factories import PolicyFactory

    PolicyFactory(client=carrier, policy_number="CERT-AL-1")
    response = api.get("/v1/certificates/clients?dot=1234567")
    assert response.status_code == 200, response.content
    return response.json()["certificateNumber"]


def test_certificate_lookup_needs_the_certificate_permissions(make_api, agency, issued):
    from django.contrib.auth.models import Group, Permission

    from tests.factories import UserFactory

    only_policies = Group.objects.create(name="policies only")
    only_policies.permissions.add(Permission.objects.get(codename="view_policy"))
    user = UserFactory(agencies=[agency], groups=[only_policies])
    assert_problem(make_api(user).get(f"/v1/certificates/{issued}"), 403)


def test_genuine_number_of_another_agency_answers_as_a_forged_one(other_api, issued):
    forged = issued[:-1] + ("0" if issued[-1] != "0" else "1")
    genuine = assert_problem(other_api.get(f"/v1/certificates/{issued}"), 404)
    fake = assert_problem(other_api.get(f"/v1/certificates/{forged}"), 404)
    assert genuine["detail"] == fake["detail"]
    assert genuine["title"] == fake["title"]


# -- 10. a method the route does not offer ----------------------------------------------------

PROBED_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def _v1_route_paths() -> dict[str, str]:
    """Every named /v1 route of the URLconf -> a concrete path to it (every argument 1)."""
    paths: dict[str, str] = {}

    def walk(patterns, prefix):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif route.lstrip("^").startswith("v1/") and pattern.name:
                arguments = set(pattern.pattern.regex.groupindex) - set(pattern.default_args)
                paths[pattern.name] = reverse(pattern.name, kwargs=dict.fromkeys(arguments, 1))

    walk(get_resolver().url_patterns, "")
    return paths


@pytest.fixture(scope="module")
def offered_by_path(django_db_blocker):
    """Path template of the OpenAPI document -> the methods it declares (what is offered)."""
    with django_db_blocker.unblock():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    return {path: {method.upper() for method in ops} for path, ops in schema["paths"].items()}


def _offered(path: str, offered_by_path: dict[str, set[str]]) -> set[str]:
    if path in ("/v1/schema", "/v1/docs"):  # outside the document they serve
        return {"GET"}
    matching = [
        template
        for template in offered_by_path
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path)
    ]
    # A literal segment beats a parameter (/v1/certificates/clients, not .../{number}).
    template = min(matching, key=lambda template: template.count("{"))
    return offered_by_path[template]


def _is_problem(response, status: int) -> bool:
    try:
        return response["Content-Type"] == "application/problem+json" and (
            response.json()["status"] == status
        )
    except ValueError:  # a body in another format under the problem+json type
        return False


def test_every_v1_route_answers_405_with_allow_for_what_it_does_not_offer(
    make_api, powerless, viewer, offered_by_path
):
    """Contract 13, on every route of the URLconf: whatever the caller's permissions (a
    viewer, a member without any permission), a method without a handler is 405 with `Allow`
    naming exactly what the route offers, before any permission or body is looked at."""
    paths = _v1_route_paths()
    assert "document-download-client" in paths and "webhook-redeliver" in paths
    wrong = []
    for path in sorted(paths.values()):
        offered = _offered(path, offered_by_path)
        allow = offered | {"OPTIONS"} | ({"HEAD"} if "GET" in offered else set())
        for method in PROBED_METHODS:
            if method in allow:
                continue
            for user in (viewer, powerless):
                response = make_api(user).generic(method, path)
                allowed = {m.strip() for m in response.get("Allow", "").split(",") if m.strip()}
                problem = method == "HEAD" or _is_problem(response, 405)
                if response.status_code != 405 or allowed != allow or not problem:
                    wrong.append((method, path, user.username, response.status_code, allowed))
    assert wrong == [], "\n".join(map(str, wrong))


# -- 5. deeply nested JSON --------------------------------------------------------------------


def test_json_nested_100000_levels_is_400(api):
    body = "[" * 100_000 + "]" * 100_000
    response = api.post("/v1/clients", data=body, content_type="application/json")
    assert "64" in assert_problem(response, 400)["detail"]


def test_json_nested_65_levels_is_400_and_brackets_in_strings_do_not_count(api):
    deep = '{"clientName": ' + "[" * 65 + "]" * 65 + "}"
    assert_problem(api.post("/v1/clients", data=deep, content_type="application/json"), 400)
    shallow = '{"clientName": "' + "[" * 500 + '", "dot": "2345678"}'
    response = api.post("/v1/clients", data=shallow, content_type="application/json")
    # Parsed (no depth error): the body reaches validation, which judges the fields.
    assert "nested" not in response.json().get("detail", "")


# -- 6 and 12. integers, DOTs and repeated parameters -----------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/v1/vehicles?make=99999999999999999999",
        "/v1/vehicles?clientId=99999999999999999999",
        "/v1/policies/{policy}/vehicles?make=99999999999999999999",
        "/v1/clients?agencyId=9223372036854775808",
        "/v1/coverages/clients?id=99999999999999999999",
        "/v1/certificates/clients?id=99999999999999999999",
        "/v1/clients?page=99999999999999999999",
    ],
)
def test_integer_out_of_range_is_400(api, carrier, path):
    from tests.factories import PolicyFactory

    policy = PolicyFactory(client=carrier)
    assert_problem(api.get(path.format(policy=policy.pk)), 400)


@pytest.mark.parametrize(
    "query",
    ["page=\uff11", "page=1_0", "page=%2B1", "limit=\uff15", "clientId=\uff11", "agencyId=1_0"],
)
def test_integers_are_ascii_digits_only(api, carrier, query):
    path = "/v1/vehicles" if query.startswith("clientId") else "/v1/clients"
    assert_problem(api.get(f"{path}?{query}"), 400)


def test_dot_with_leading_zeros_is_the_same_carrier(api, agency, carrier):
    response = api.post(
        "/v1/clients",
        {"clientName": "Twin", "dot": "01234567", "agencyId": agency.pk},
        format="json",
    )
    assert_problem(response, 409)
    found = api.get("/v1/coverages/clients?dot=01234567").json()
    assert found["results"][0]["found"] is True
    assert found["results"][0]["dot"] == "1234567"
    # Zeros are dropped before the length rule: nine characters, seven digits of a DOT.
    assert api.get("/v1/clients?dot=001234567").json()["count"] == 1
    assert_problem(api.get("/v1/clients?dot=123456789"), 400)
    assert api.get("/v1/clients?dot=01234567").json()["count"] == 1


def test_dot_is_stored_normalised_and_all_zeros_is_400(api, agency):
    created = api.post(
        "/v1/clients", {"clientName": "Zero", "dot": "0042", "agencyId": agency.pk}, format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["dot"] == "42"
    zeros = api.post(
        "/v1/clients", {"clientName": "Z", "dot": "0000", "agencyId": agency.pk}, format="json"
    )
    assert assert_problem(zeros, 400)["errors"][0]["field"] == "dot"
    assert_problem(api.get("/v1/coverages/clients?dot=000"), 400)
    assert_problem(api.get("/v1/coverages/clients?dot=\uff14\uff12"), 400)


def test_dot_from_a_model_write_is_normalised(agency):
    from tests.factories import ClientFactory

    assert ClientFactory(agency=agency, dot="00777").dot == "777"


@pytest.mark.parametrize(
    "path",
    [
        "/v1/coverages/clients?dot=1&dot=2",
        "/v1/clients?page=1&page=2",
        "/v1/vehicles?make=1&make=2",
        "/v1/certificates/clients?id=1&id=2",
    ],
)
def test_single_valued_parameter_sent_twice_is_400(api, carrier, path):
    body = assert_problem(api.get(path), 400)
    assert body["errors"][0]["code"] == "repeated"


def test_repeatable_parameter_may_repeat(api, carrier):
    response = api.get("/v1/coverages/clients?dots=1234567&dots=7654321")
    assert response.status_code == 200, response.content


# -- 4. policy numbers do not reveal other agencies -------------------------------------------


def _policy(client, **extra):
    return {
        "clientId": client.id,
        "effectiveDate": "2026-01-01",
        "expirationDate": "2027-01-01",
        "coverageType": "AL",
        **extra,
    }


def test_policy_number_of_another_agency_is_accepted(api, other_api, carrier, rival):
    from tests.factories import PolicyFactory

    theirs = PolicyFactory(client=rival, policy_number="SHARED-1")
    mine = _policy(carrier, policyNumber="SHARED-1", insurerName=theirs.insurer.name)
    created = api.post("/v1/policies", mine, format="json")
    assert created.status_code == 201, created.content
    # Updating another policy to that number is accepted as well.
    other = PolicyFactory(client=carrier, policy_number="MINE-2", insurer=theirs.insurer)
    moved = api.put(f"/v1/policies/{other.pk}", {"policyNumber": "SHARED-2"}, format="json")
    assert moved.status_code == 200, moved.content
    PolicyFactory(client=rival, policy_number="SHARED-2", insurer=theirs.insurer)
    # Within one agency the number stays unique per insurer.
    again = _policy(carrier, policyNumber="SHARED-1", insurerName=theirs.insurer.name)
    assert_problem(api.post("/v1/policies", again, format="json"), 409)
    assert_problem(
        other_api.put(f"/v1/policies/{theirs.pk}", {"policyNumber": "SHARED-2"}, format="json"),
        409,
    )


def test_the_database_enforces_the_per_agency_number(carrier, rival):
    """The constraint, not only the service, refuses a duplicate (concurrent writers)."""
    from django.db import IntegrityError, transaction

    from tests.factories import PolicyFactory

    first = PolicyFactory(client=carrier, policy_number="RACE-1")
    assert first.agency_id == carrier.agency_id
    PolicyFactory(client=rival, policy_number="RACE-1", insurer=first.insurer)
    with pytest.raises(IntegrityError), transaction.atomic():
        PolicyFactory(client=carrier, policy_number="RACE-1", insurer=first.insurer)


def test_a_client_that_moves_takes_its_policies_agency(carrier, other_agency):
    from tests.factories import PolicyFactory

    policy = PolicyFactory(client=carrier)
    carrier.agency = other_agency
    carrier.save()
    policy.refresh_from_db()
    assert policy.agency_id == other_agency.pk


# -- 13. uploads: empty files and sniffed types -----------------------------------------------

PE_EXECUTABLE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + b"\x00" * 48


def _upload(api, carrier, content: bytes, name: str = "coi.pdf"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = {
        "file": SimpleUploadedFile(name, content, content_type="application/pdf"),
        "clientId": carrier.id,
    }
    return api.post("/v1/documents/clients", data, format="multipart")


def test_empty_upload_is_400(api, carrier):
    body = assert_problem(_upload(api, carrier, b""), 400)
    assert body["errors"][0]["field"] == "file"


@pytest.mark.parametrize(
    "content,detected",
    [
        (PE_EXECUTABLE, "application/x-msdownload"),
        (b"PK\x03\x04" + b"\x14\x00" * 20, "application/zip"),
        (b"<!DOCTYPE html><html><script>alert(1)</script></html>", "text/html"),
        (b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>', "image/svg+xml"),
        (b"#!/bin/sh\nrm -rf /\n", "text/x-shellscript"),
    ],
)
def test_disallowed_type_declared_as_pdf_is_415_naming_it(api, carrier, content, detected):
    from apps.documents.models import Document

    body = assert_problem(_upload(api, carrier, content), 415)
    assert detected in body["detail"]
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    "content,name",
    [
        (b"%PDF-1.4\n%ok\n", "coi.pdf"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 32, "a.png"),
        (b"unit,vin\n101,1FUJGLDR7CLBP8834\n", "units.csv"),
    ],
)
def test_allowed_types_are_stored(api, carrier, content, name):
    assert _upload(api, carrier, content, name).status_code == 201


def test_replacement_obeys_the_same_rule(api, carrier):
    from django.core.files.uploadedfile import SimpleUploadedFile

    document = _upload(api, carrier, b"%PDF-1.4\n%ok\n").json()
    for content, status in ((PE_EXECUTABLE, 415), (b"", 400)):
        response = api.put(
            f"/v1/documents/{document['id']}/client",
            {"file": SimpleUploadedFile("v2.pdf", content)},
            format="multipart",
        )
        assert_problem(response, status)


# -- 16. the vehicles of a policy are vehicles ------------------------------------------------


def test_policy_vehicles_are_vehicles_once_with_their_latest_period(api, carrier):
    import datetime as dt

    from tests.factories import PolicyFactory, VehicleCoverageFactory, VehicleFactory

    policy = PolicyFactory(client=carrier)
    truck = VehicleFactory(client=carrier, unit="T-1")
    start = policy.effective_date
    VehicleCoverageFactory(
        vehicle=truck,
        policy=policy,
        coverage_status=1,
        policy_added_date=start,
        policy_removed_date=start + dt.timedelta(days=10),
    )
    latest = VehicleCoverageFactory(
        vehicle=truck, policy=policy, policy_added_date=start + dt.timedelta(days=20)
    )
    body = api.get(f"/v1/policies/{policy.pk}/vehicles").json()
    assert body["count"] == 1
    [item] = body["results"]
    listed = api.get(f"/v1/vehicles?clientId={carrier.pk}").json()["results"][0]
    assert item["id"] == truck.pk
    assert {k: v for k, v in item.items() if k in listed} == listed
    assert item["assignmentId"] == latest.pk
    assert item["coverageStatus"] == latest.coverage_status
    assert item["policyAddedDate"] == latest.policy_added_date.isoformat()
    assert item["policyRemovedDate"] is None
    assert "vehicle" not in item


# -- 9. twins of an idempotent upload on SQLite -----------------------------------------------


def test_a_twin_that_finds_the_database_locked_gets_409_not_503(api, carrier, monkeypatch):
    """SQLite answers "database is locked" to a writer that waited past the lock timeout
    while the first request held the write lock: that twin must get 409 like any other."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import OperationalError

    from apps.core.models import IdempotencyRecord
    from apps.documents.models import Document

    def locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(IdempotencyRecord.objects, "create", locked)
    response = api.post(
        "/v1/documents/clients",
        {"file": SimpleUploadedFile("coi.pdf", b"%PDF-1.4 twin"), "clientId": carrier.id},
        format="multipart",
        HTTP_IDEMPOTENCY_KEY="twin-key",
    )
    assert "in progress" in assert_problem(response, 409)["detail"]
    assert not Document.objects.exists()


def test_other_database_errors_still_answer_503(api, carrier, monkeypatch):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import OperationalError

    from apps.core.models import IdempotencyRecord

    def broken(**kwargs):
        raise OperationalError("disk I/O error")

    monkeypatch.setattr(IdempotencyRecord.objects, "create", broken)
    api.raise_request_exception = False
    response = api.post(
        "/v1/documents/clients",
        {"file": SimpleUploadedFile("coi.pdf", b"%PDF-1.4 twin"), "clientId": carrier.id},
        format="multipart",
        HTTP_IDEMPOTENCY_KEY="twin-key-2",
    )
    assert_problem(response, 503)


# -- 17. the OpenAPI document -----------------------------------------------------------------


@pytest.fixture
def schema(api):
    response = api.get("/v1/schema", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    import json

    return json.loads(response.content)


def test_openapi_lists_the_spec_document_paths_with_integer_ids(schema):
    paths = schema["paths"]
    for path in (
        "/v1/documents/{id}/client",
        "/v1/documents/{id}/policy",
        "/v1/documents/{id}/client/download",
        "/v1/documents/{id}/policy/download",
    ):
        assert path in paths
    assert not [p for p in paths if "{module}" in p]
    for path, operations in paths.items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path" and parameter["name"] != "number":
                    assert parameter["schema"]["type"] == "integer", (method, path)


def test_openapi_lists_only_the_error_statuses_an_operation_can_answer(schema):
    paths = schema["paths"]
    for operations in paths.values():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            assert "405" not in codes
            if method == "get":
                assert not codes & {"409", "413", "415", "422"}
    assert "404" not in paths["/v1/clients"]["get"]["responses"]
    assert "406" in paths["/v1/certificates/clients"]["get"]["responses"]
    assert "406" in paths["/v1/clients"]["get"]["responses"]  # every operation negotiates
    assert {"409", "413", "415"} <= set(paths["/v1/clients"]["post"]["responses"])
    assert "400" not in paths["/v1/me"]["get"]["responses"]


def test_every_operation_that_answers_406_declares_it(api, carrier, schema):
    """Contract 1: an operation declares every status it can answer. Asking for a
    representation nothing offers (`Accept: text/csv`) is a 406 problem+json on any operation,
    whatever it would otherwise answer (documents, reports and clients alike)."""
    undeclared, answered = [], set()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            concrete = re.sub(r"\{[^}]+\}", str(carrier.pk), path)
            response = api.generic(method.upper(), concrete, HTTP_ACCEPT="text/csv")
            if response.status_code == 406:
                assert_problem(response, 406)
                answered.add((method, path))
                if "406" not in operation["responses"]:
                    undeclared.append((method, path))
    assert undeclared == []
    assert {
        ("get", "/v1/reports/{id}/raw-data"),
        ("get", "/v1/documents/clients"),
        ("post", "/v1/documents/clients"),
        ("get", "/v1/clients"),
    } <= answered


def test_document_paths_other_than_the_spec_ones_are_404(api):
    assert api.get("/v1/documents/1/clientXYZ/download").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/v1/clients/9223372036854775808",
        "/v1/policies/99999999999999999999/vehicles",
        "/v1/documents/99999999999999999999/client/download",
        "/v1/vehicles/lienholders/99999999999999999999",
    ],
)
def test_path_id_beyond_2_63_is_400(api, path):
    body = assert_problem(api.get(path), 400)
    assert body["errors"][0]["field"] == "id"


def test_path_id_at_2_63_minus_1_is_an_ordinary_404(api):
    assert_problem(api.get("/v1/clients/9223372036854775807"), 404)


# Contract section 13: every integer in a path is ASCII digits only, else 400 (as past 2^63-1).
NOT_INTEGERS = ["abc", "1.5", "-1", "+1", "1e3", "0x1F", "%D9%A1", "%EF%BC%91", "1%20", "%201"]


@pytest.mark.parametrize("raw", NOT_INTEGERS)
@pytest.mark.parametrize(
    "template",
    [
        "/v1/clients/{}",
        "/v1/policies/{}",
        "/v1/vehicles/{}",
        "/v1/drivers/{}",
        "/v1/requirement-profiles/{}",
        "/v1/webhooks/{}",
        "/v1/webhooks/{}/deliveries",
        "/v1/policies/{}/vehicles",
        "/v1/documents/{}/client",
        "/v1/documents/{}/policy/download",
        "/v1/vehicles/lienholders/{}",
        "/v1/reports/{}/raw-data",
    ],
)
def test_path_id_that_is_not_an_ascii_integer_is_400(api, template, raw):
    body = assert_problem(api.get(template.format(raw)), 400)
    assert [(e["field"], e["code"]) for e in body["errors"]] == [("id", "invalid")]


def test_a_delivery_id_that_is_not_an_integer_is_400_naming_it(api):
    body = assert_problem(api.post("/v1/webhooks/1/deliveries/x1/redeliver"), 400)
    assert [e["field"] for e in body["errors"]] == ["deliveryId"]


def test_routes_beside_the_id_pattern_still_answer(api):
    # Fixed words where an id could stand are routes of their own, matched first.
    assert api.get("/v1/vehicles/coverages").status_code == 405
    assert api.get("/v1/drivers/coverages").status_code == 405
    assert api.get("/v1/drivers/search").status_code == 405
    assert api.get("/v1/policies/search").status_code == 405
    assert api.post("/v1/vehicles/lienholders", {}, format="json").status_code == 400
    # A path no route has stays 404, whatever its id looks like.
    assert_problem(api.get("/v1/clients/1/unknown"), 404)
    assert_problem(api.get("/v1/clients/abc/unknown"), 404)
    assert_problem(api.get("/v1/documents/abc/clientXYZ"), 404)
