"""Contract section 3: apiKey and bearer on every /v1 route, tokens, throttled logins, /v1/me."""

from __future__ import annotations

import datetime as dt
from io import StringIO

import jwt
import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from apps.accounts.models import ApiKey, hash_api_key
from apps.accounts.services import api_key_revoke
from apps.accounts.tokens import AccessToken
from tests.conftest import API_KEY, assert_problem, bearer_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_missing_api_key_is_401_even_with_a_valid_token(manager, api_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_for(manager)}")
    response = client.get("/v1/clients")
    body = assert_problem(response, 401)
    assert "apiKey" in body["detail"]
    assert response.has_header("WWW-Authenticate")


def test_unknown_api_key_is_401(manager, api_key):
    client = APIClient()
    client.credentials(HTTP_APIKEY="not-a-key", HTTP_AUTHORIZATION=f"Bearer {bearer_for(manager)}")
    assert_problem(client.get("/v1/clients"), 401)


def test_revoked_api_key_is_401_at_once(api, api_key):
    assert api.get("/v1/clients").status_code == 200
    api_key_revoke(api_key=ApiKey.objects.get(key_hash=hash_api_key(api_key)))
    assert_problem(api.get("/v1/clients"), 401)


def test_missing_bearer_is_401_with_challenge(make_api):
    response = make_api().get("/v1/clients")
    assert_problem(response, 401)
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    "header", ["Bearer", "Bearer not.a.jwt", "Bearer a b", "Basic Zm9vOmJhcg=="]
)
def test_malformed_authorization_is_401(make_api, header):
    client = make_api()
    client.credentials(HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION=header)
    response = client.get("/v1/clients")
    assert_problem(response, 401)
    assert response.has_header("WWW-Authenticate")


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "bEaReR"])
def test_the_bearer_scheme_is_matched_in_any_case(make_api, manager, scheme):
    # RFC 7235 section 2.1: the auth-scheme is case-insensitive.
    client = make_api()
    client.credentials(HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION=f"{scheme} {bearer_for(manager)}")
    response = client.get("/v1/me")
    assert response.status_code == 200, response.content
    assert response.json()["username"] == "manager"


def test_a_bad_token_under_a_lowercase_scheme_is_refused_with_the_same_challenge(make_api):
    client = make_api()
    client.credentials(HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION="bearer not.a.jwt")
    response = client.get("/v1/clients")
    body = assert_problem(response, 401)
    assert "not provided" not in body["detail"]  # the token was read, and found invalid
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_expired_token_is_401(make_api, manager):
    token = AccessToken.for_user(manager)
    token.set_exp(lifetime=-dt.timedelta(seconds=1))
    client = make_api()
    client.credentials(HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert_problem(client.get("/v1/clients"), 401)


def test_token_signed_with_another_key_is_401(make_api, manager):
    payload = dict(AccessToken.for_user(manager).payload)
    forged = jwt.encode(payload, "some-other-signing-key-of-sufficient-length", "HS256")
    client = make_api()
    client.credentials(HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION=f"Bearer {forged}")
    assert_problem(client.get("/v1/clients"), 401)


@pytest.mark.parametrize(
    "claims",
    [
        {"user_id": "99999999999999999999999"},
        {"user_id": 10**30},
        {"user_id": "\u0662"},  # an Arabic-Indic two: int() reads it
        {"user_id": "-1"},
        {"exp": 10**20},
    ],
)
def test_a_token_signed_with_our_key_but_odd_claims_is_401_not_500(make_api, manager, claims):
    # Only a holder of the signing key can make one: still a 401, never a database error.
    from django.conf import settings

    payload = {**AccessToken.for_user(manager).payload, **claims}
    signed = jwt.encode(payload, settings.SIMPLE_JWT["SIGNING_KEY"], "HS256")
    client = make_api()
    client.raise_request_exception = False
    client.credentials(HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION=f"Bearer {signed}")
    assert_problem(client.get("/v1/clients"), 401)


@pytest.mark.parametrize(
    "user_id",
    [
        "abc",
        [1],
        {"id": 1},
        10**30,
        "99999999999999999999999",
        -1,
        "-1",
        0,
        1.5,
        True,
        None,
        "\u0662",
    ],
)
def test_a_refresh_token_signed_with_our_key_but_an_odd_user_id_is_401_not_500(
    make_api, manager, user_id
):
    # The same rule as the bearer route's (the test above): only a holder of the signing key
    # can make one, and it is a 401, never a ValueError from the user lookup.
    from django.conf import settings

    from apps.accounts.tokens import RefreshToken

    payload = {**RefreshToken.for_user(manager).payload, "user_id": user_id}
    signed = jwt.encode(payload, settings.SIMPLE_JWT["SIGNING_KEY"], "HS256")
    client = make_api()
    client.raise_request_exception = False
    response = client.post("/v1/auth/token/refresh", {"refresh": signed}, format="json")
    body = assert_problem(response, 401)
    assert body["detail"] == "The refresh token is invalid or expired."


def test_a_refresh_token_without_a_user_id_is_401(make_api, manager):
    from django.conf import settings

    from apps.accounts.tokens import RefreshToken

    payload = dict(RefreshToken.for_user(manager).payload)
    del payload["user_id"]
    signed = jwt.encode(payload, settings.SIMPLE_JWT["SIGNING_KEY"], "HS256")
    client = make_api()
    client.raise_request_exception = False
    response = client.post("/v1/auth/token/refresh", {"refresh": signed}, format="json")
    assert_problem(response, 401)


def test_a_refresh_token_whose_user_id_is_the_users_in_digits_still_refreshes(make_api, manager):
    # A string of ASCII digits is a user id on the bearer route too.
    from django.conf import settings

    from apps.accounts.tokens import RefreshToken

    payload = {**RefreshToken.for_user(manager).payload, "user_id": str(manager.pk)}
    signed = jwt.encode(payload, settings.SIMPLE_JWT["SIGNING_KEY"], "HS256")
    response = make_api().post("/v1/auth/token/refresh", {"refresh": signed}, format="json")
    assert response.status_code == 200, response.content


def test_token_pair_then_refresh_then_use(make_api, manager):
    client = make_api()
    response = client.post(
        "/v1/auth/token", {"username": "manager", "password": "secret-password"}, format="json"
    )
    assert response.status_code == 200
    pair = response.json()
    assert set(pair) == {"access", "refresh"}
    refreshed = client.post("/v1/auth/token/refresh", {"refresh": pair["refresh"]}, format="json")
    assert refreshed.status_code == 200
    assert set(refreshed.json()) == {"access"}
    client.credentials(
        HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION=f"Bearer {refreshed.json()['access']}"
    )
    assert client.get("/v1/me").json()["username"] == "manager"


def test_a_token_pair_carries_no_password_hash(make_api, manager):
    """Only a digest keyed with the signing key: a token is readable by whoever holds it."""
    pair = (
        make_api()
        .post(
            "/v1/auth/token", {"username": "manager", "password": "secret-password"}, format="json"
        )
        .json()
    )
    secrets = {manager.password, *manager.password.split("$")[1:]}  # the hash, salt, digest
    for token in pair.values():
        claims = jwt.decode(token, options={"verify_signature": False})
        assert not [claim for claim in map(str, claims.values()) if claim in secrets]


def test_tokens_issued_without_a_password_digest_are_401(make_api, manager):
    """Issued before a password change ended tokens (as simplejwt issues them, no digest of
    the password they were issued under): refused, access and refresh alike."""
    from rest_framework_simplejwt.tokens import RefreshToken

    refresh = RefreshToken.for_user(manager)
    client = make_api()
    client.credentials(HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION=f"Bearer {refresh.access_token}")
    assert_problem(client.get("/v1/me"), 401)
    response = make_api().post("/v1/auth/token/refresh", {"refresh": str(refresh)}, format="json")
    assert assert_problem(response, 401)["detail"] == "The refresh token is invalid or expired."


def test_token_route_needs_api_key(manager, api_key):
    response = APIClient().post(
        "/v1/auth/token", {"username": "manager", "password": "secret-password"}, format="json"
    )
    assert_problem(response, 401)


def test_wrong_password_is_401(make_api, manager):
    response = make_api().post(
        "/v1/auth/token", {"username": "manager", "password": "wrong"}, format="json"
    )
    assert_problem(response, 401)


def test_token_request_without_password_is_400(make_api, manager):
    body = assert_problem(
        make_api().post("/v1/auth/token", {"username": "manager"}, format="json"), 400
    )
    assert body["errors"][0]["field"] == "password"


def test_invalid_refresh_token_is_401(make_api):
    assert_problem(
        make_api().post("/v1/auth/token/refresh", {"refresh": "nope"}, format="json"), 401
    )


def test_failed_logins_are_throttled_per_user_name(make_api, manager, settings):
    client = make_api()
    for _ in range(settings.LOGIN_FAILURES_PER_USER):
        response = client.post(
            "/v1/auth/token", {"username": "manager", "password": "wrong"}, format="json"
        )
        assert response.status_code == 401
    response = client.post(
        "/v1/auth/token", {"username": "manager", "password": "secret-password"}, format="json"
    )
    assert_problem(response, 429)
    assert int(response["Retry-After"]) > 0


def test_a_user_name_differing_only_in_case_does_not_clear_anothers_failures(
    make_api, manager, groups, agency, settings
):
    """User names are case-sensitive (two accounts may differ only in case): the owner of
    `MANAGER` logging in must not hand guesses at `manager` a fresh limit."""
    UserFactory(username="MANAGER", agencies=[agency], groups=[groups[0]])
    client = make_api()
    for _ in range(settings.LOGIN_FAILURES_PER_USER - 1):
        response = client.post(
            "/v1/auth/token", {"username": "manager", "password": "wrong"}, format="json"
        )
        assert response.status_code == 401
    response = client.post(
        "/v1/auth/token", {"username": "MANAGER", "password": "secret-password"}, format="json"
    )
    assert response.status_code == 200
    response = client.post(
        "/v1/auth/token", {"username": "manager", "password": "wrong"}, format="json"
    )
    assert response.status_code == 401
    response = client.post(
        "/v1/auth/token", {"username": "manager", "password": "secret-password"}, format="json"
    )
    assert_problem(response, 429)


def test_failed_logins_are_throttled_per_address(make_api, manager, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 3
    client = make_api()
    for n in range(3):
        client.post("/v1/auth/token", {"username": f"ghost{n}", "password": "x"}, format="json")
    response = client.post(
        "/v1/auth/token", {"username": "manager", "password": "secret-password"}, format="json"
    )
    assert_problem(response, 429)


def test_me_lists_agencies_and_permissions(api, agency):
    response = api.get("/v1/me")
    assert response.status_code == 200
    body = response.json()
    assert body["username"] == "manager"
    assert body["agencies"] == [{"id": agency.id, "name": "Demo Agency"}]
    assert "clients.add_client" in body["permissions"]


@pytest.mark.parametrize("name", ["", "   ", "x" * 121])
def test_create_api_key_with_a_name_it_cannot_take_is_a_command_error(name):
    # `create_api_key ""` ended in a traceback (the model's ValidationError) instead.
    with pytest.raises(CommandError, match="name"):
        call_command("create_api_key", name, stdout=StringIO())
    assert not ApiKey.objects.exists()


def test_create_api_key_prints_a_working_key_and_stores_only_its_hash(manager):
    out = StringIO()
    call_command("create_api_key", "fleet sync", stdout=out)
    raw = out.getvalue().strip()
    key = ApiKey.objects.get(name="fleet sync")
    assert key.key_hash == hash_api_key(raw)
    assert raw not in (key.prefix + key.key_hash)
    client = APIClient()
    client.credentials(HTTP_APIKEY=raw, HTTP_AUTHORIZATION=f"Bearer {bearer_for(manager)}")
    assert client.get("/v1/me").status_code == 200
