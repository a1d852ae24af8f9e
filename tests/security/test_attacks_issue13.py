"""Issue 13: each finding of the red team, replayed over HTTP with real credentials.

Every test here failed on the code as it was before the fix it names.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.conftest import API_KEY

pytestmark = pytest.mark.django_db


def assert_problem(response, status: int) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status
    return body


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


@pytest.mark.parametrize(
    "method,path",
    [
        ("delete", "/v1/clients/{id}"),
        ("patch", "/v1/clients/{id}"),
        ("delete", "/v1/coverages/clients?dot=1234567"),
        ("post", "/v1/certificates/clients"),
        ("put", "/v1/reports/1/raw-data"),
    ],
)
def test_unoffered_method_is_405_with_allow_whatever_the_permissions(
    make_api, powerless, viewer, carrier, method, path
):
    for user in (viewer, powerless):
        response = getattr(make_api(user), method)(path.format(id=carrier.pk))
        assert_problem(response, 405)
        assert "GET" in response["Allow"]


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
