"""Contract section 13: revoking access takes effect on the very next request, on every node.

Each test warms the caller's remembered permissions with a successful request first, changes
one thing by one path (the admin, a service, a queryset, raw SQL), and asserts that the next
request is refused (the cross-process case runs two gunicorn processes).

Every test of a change made through Django runs twice: with the caller read from the database
on every request ("live", PRINCIPAL_CACHE_SECONDS=0) and kept in the shared cache ("cached").
A change made behind Django's back (raw SQL, a queryset's `update()`) takes effect at once
only when live (`live_only`); cached, within PRINCIPAL_CACHE_SECONDS
(tests/accounts/test_principal_cache.py).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import time
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.db import connection
from django.test import Client as BrowserClient

from apps.accounts.models import ApiKey, hash_api_key
from apps.accounts.tokens import RefreshToken
from apps.agencies.models import AgencyMembership
from tests.conftest import API_KEY, assert_problem
from tests.factories import UserFactory
from tests.processes import gunicorn_nodes, needs_redis

# Transactional: writes commit, so the principals' generation moves as it does in production.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("master_data_back")]
ROOT = Path(__file__).resolve().parents[2]


def live_only(test):
    """A test of a change Django does not see: at once only when the caller is read live."""
    test.live_only = True
    return test


def pytest_generate_tests(metafunc):
    modes = [0] if getattr(metafunc.function, "live_only", False) else [0, 30]
    metafunc.parametrize(
        "principal_cache", modes, indirect=True, ids=lambda s: "cached" if s else "live"
    )


@pytest.fixture(autouse=True)
def principal_cache(request, settings):
    """PRINCIPAL_CACHE_SECONDS for the test, on an empty cache."""
    from django.core.cache import cache

    settings.PRINCIPAL_CACHE_SECONDS = request.param
    cache.clear()
    return request.param


def _key_row(api_key):
    return ApiKey.objects.get(key_hash=hash_api_key(api_key))


def test_a_key_deleted_in_the_admin_is_refused_at_once(api, api_key):
    assert api.get("/v1/me").status_code == 200
    admin = UserFactory(username="root", is_staff=True, is_superuser=True)
    browser = BrowserClient()
    browser.force_login(admin)
    key = _key_row(api_key)
    response = browser.post(f"/admin/accounts/apikey/{key.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not ApiKey.objects.filter(pk=key.pk).exists()
    assert_problem(api.get("/v1/me"), 401)


def test_a_key_deleted_with_a_queryset_is_refused_at_once(api, api_key):
    assert api.get("/v1/clients").status_code == 200
    ApiKey.objects.filter(key_hash=hash_api_key(api_key)).delete()
    assert_problem(api.get("/v1/clients"), 401)


@live_only
def test_a_key_deleted_with_raw_sql_is_refused_at_once(api, api_key):
    assert api.get("/v1/clients").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {ApiKey._meta.db_table}")
    body = assert_problem(api.get("/v1/clients"), 401)
    assert "apiKey" in body["detail"]


@live_only
def test_a_key_revoked_by_update_is_refused_at_once(api, api_key):
    assert api.get("/v1/me").status_code == 200
    ApiKey.objects.update(revoked_at="2026-01-01T00:00:00Z")
    assert_problem(api.get("/v1/me"), 401)


def test_a_deactivated_user_is_refused_at_once(api, manager):
    assert api.get("/v1/me").status_code == 200
    manager.is_active = False
    manager.save()
    assert_problem(api.get("/v1/me"), 401)


@live_only
def test_a_user_deactivated_with_a_queryset_update_is_refused_at_once(api, manager):
    assert api.get("/v1/me").status_code == 200
    type(manager).objects.filter(pk=manager.pk).update(is_active=False)
    assert_problem(api.get("/v1/me"), 401)


def test_a_deleted_user_is_refused_at_once(api, manager):
    assert api.get("/v1/me").status_code == 200
    manager.delete()
    assert_problem(api.get("/v1/me"), 401)


# A password change ends every token issued before it, on every node, at once, as it ends
# Django's sessions (get_session_auth_hash); nothing else about the user does.
NEW_PASSWORD = "a-new-password-9431"


def _login(make_api, password: str = "secret-password") -> dict:
    """The manager's token pair from POST /v1/auth/token, as an integrator obtains it."""
    response = make_api().post(
        "/v1/auth/token", {"username": "manager", "password": password}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def _bearer(make_api, access: str):
    client = make_api()
    client.credentials(HTTP_APIKEY=API_KEY, HTTP_AUTHORIZATION=f"Bearer {access}")
    return client


def _refresh(make_api, refresh: str):
    return make_api().post("/v1/auth/token/refresh", {"refresh": refresh}, format="json")


def _works(make_api, pair: dict) -> None:
    """The access token answers /v1/me, and the refresh token gives one that does too."""
    assert _bearer(make_api, pair["access"]).get("/v1/me").status_code == 200
    refreshed = _refresh(make_api, pair["refresh"])
    assert refreshed.status_code == 200, refreshed.content
    assert _bearer(make_api, refreshed.json()["access"]).get("/v1/me").status_code == 200


def _expired_answer(make_api, manager) -> dict:
    token = RefreshToken.for_user(manager).access_token
    token.set_exp(lifetime=-dt.timedelta(seconds=1))
    return assert_problem(_bearer(make_api, str(token)).get("/v1/me"), 401)


def _ended(make_api, pair: dict, expired: dict) -> None:
    """The access token answers 401 as an expired one does; the refresh token, 401."""
    response = _bearer(make_api, pair["access"]).get("/v1/me")
    assert assert_problem(response, 401) == expired
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    body = assert_problem(_refresh(make_api, pair["refresh"]), 401)
    assert body["detail"] == "The refresh token is invalid or expired."


def test_a_password_changed_in_the_admin_ends_the_tokens_issued_before_it(make_api, manager):
    expired = _expired_answer(make_api, manager)
    pair = _login(make_api)
    _works(make_api, pair)
    browser = BrowserClient()
    browser.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    form = {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    response = browser.post(f"/admin/auth/user/{manager.pk}/password/", form)
    assert response.status_code == 302, response.content
    _ended(make_api, pair, expired)
    _works(make_api, _login(make_api, NEW_PASSWORD))


def test_a_password_set_and_saved_ends_the_tokens_issued_before_it(make_api, manager):
    expired = _expired_answer(make_api, manager)
    pair = _login(make_api)
    _works(make_api, pair)
    manager.set_password(NEW_PASSWORD)
    manager.save()
    _ended(make_api, pair, expired)
    _works(make_api, _login(make_api, NEW_PASSWORD))


def test_a_password_changed_by_the_changepassword_command_ends_the_tokens(
    make_api, manager, monkeypatch
):
    from django.contrib.auth.management.commands import changepassword

    expired = _expired_answer(make_api, manager)
    pair = _login(make_api)
    _works(make_api, pair)
    monkeypatch.setattr(changepassword.getpass, "getpass", lambda prompt="": NEW_PASSWORD)
    call_command("changepassword", "manager", stdout=StringIO())
    _ended(make_api, pair, expired)
    _works(make_api, _login(make_api, NEW_PASSWORD))


def test_an_access_token_refreshed_before_a_password_change_ends_with_it(make_api, manager):
    """A refresh never yields a working access token from a refresh token the change ended:
    refreshed before the change, it ends with it; after, the refresh is refused."""
    expired = _expired_answer(make_api, manager)
    pair = _login(make_api)
    refreshed = _refresh(make_api, pair["refresh"]).json()["access"]
    assert _bearer(make_api, refreshed).get("/v1/me").status_code == 200
    manager.set_password(NEW_PASSWORD)
    manager.save(update_fields=["password"])
    _ended(make_api, {**pair, "access": refreshed}, expired)


def test_a_name_email_or_group_change_keeps_the_tokens(make_api, manager, groups):
    pair = _login(make_api)
    _works(make_api, pair)
    manager.first_name, manager.last_name, manager.email = "Ann", "Other", "ann@example.com"
    manager.save()
    manager.groups.add(groups[1])
    manager.groups.remove(groups[0])
    _works(make_api, pair)
    assert _bearer(make_api, pair["access"]).get("/v1/me").json()["username"] == "manager"


def test_a_login_that_upgrades_the_stored_hash_ends_the_earlier_tokens_once(
    make_api, manager, settings
):
    """Django stores a password anew when a login finds it under a hasher that is no longer the
    first (or with fewer iterations: every Django feature release raises them). That is a new
    hash, so, as for Django's sessions, the tokens issued before it end (documented); the login's
    own tokens, and later logins', work."""
    expired = _expired_answer(make_api, manager)
    phone = _login(make_api)
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        *settings.PASSWORD_HASHERS,
    ]
    laptop = _login(make_api)
    _ended(make_api, phone, expired)
    _works(make_api, laptop)
    _works(make_api, _login(make_api))  # stored under the first hasher now: nothing ends


def test_a_removed_membership_hides_the_agency_at_once(api, manager, carrier):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    AgencyMembership.objects.get(user=manager).delete()
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 404)
    assert api.get("/v1/me").json()["agencies"] == []


@live_only
def test_a_membership_removed_with_raw_sql_hides_the_agency_at_once(api, manager, carrier):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {AgencyMembership._meta.db_table} WHERE user_id = %s", [manager.pk]
        )
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 404)


def test_a_permission_removed_from_the_group_is_refused_at_once(api, manager, groups, carrier):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    groups[0].permissions.remove(Permission.objects.get(codename="view_client"))
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)


def test_a_permission_removed_through_the_reverse_side_is_refused_at_once(api, groups, carrier):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    Permission.objects.get(codename="view_client").group_set.clear()
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)


def test_a_user_taken_out_of_its_group_is_refused_at_once(api, manager, groups, carrier):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    groups[0].user_set.remove(manager)
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)


def test_a_granted_permission_takes_effect_at_once(make_api, powerless, carrier):
    api = make_api(powerless)
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)
    powerless.user_permissions.add(Permission.objects.get(codename="view_client"))
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200


def _raw(sql: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _perm_id(codename: str) -> int:
    return Permission.objects.get(codename=codename).pk


@live_only
def test_a_permission_removed_from_a_group_with_raw_sql_is_refused_at_once(api, groups, carrier):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    _raw(
        "DELETE FROM auth_group_permissions WHERE group_id = %s AND permission_id = %s",
        [groups[0].pk, _perm_id("view_client")],
    )
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)


@live_only
def test_a_user_taken_out_of_its_group_with_raw_sql_is_refused_at_once(api, manager, carrier):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    _raw("DELETE FROM auth_user_groups WHERE user_id = %s", [manager.pk])
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)


@live_only
def test_a_permission_granted_with_raw_sql_takes_effect_at_once(make_api, powerless, carrier):
    api = make_api(powerless)
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)
    _raw(
        "INSERT INTO auth_user_user_permissions (user_id, permission_id) VALUES (%s, %s)",
        [powerless.pk, _perm_id("view_client")],
    )
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    _raw("DELETE FROM auth_user_user_permissions WHERE user_id = %s", [powerless.pk])
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)


@live_only
def test_a_group_given_a_permission_with_raw_sql_grants_it_at_once(make_api, powerless, carrier):
    from django.contrib.auth.models import Group

    group = Group.objects.create(name="Raw SQL readers")
    powerless.groups.add(group)
    api = make_api(powerless)
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)
    _raw(
        "INSERT INTO auth_group_permissions (group_id, permission_id) VALUES (%s, %s)",
        [group.pk, _perm_id("view_client")],
    )
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200


@live_only
def test_superuser_taken_away_with_raw_sql_loses_every_permission_at_once(
    make_api, agency, carrier
):
    root = UserFactory(agencies=[agency], is_superuser=True)
    api = make_api(root)
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    _raw("UPDATE auth_user SET is_superuser = %s WHERE id = %s", [False, root.pk])
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)


@live_only
@pytest.mark.parametrize(
    "table",
    [
        "auth_user_groups",
        "auth_user_user_permissions",
        "auth_group_permissions",
        "auth_group",
        "auth_permission",
        "django_content_type",
    ],
)
def test_every_change_to_a_permission_table_moves_the_version(table, manager, powerless):
    """The triggers exist on both databases (a table rebuilt by a later SQLite migration
    would lose them: this fails then)."""
    from apps.accounts.models import PermissionsVersion

    powerless.user_permissions.add(Permission.objects.get(codename="view_client"))
    before = PermissionsVersion.objects.get(pk=1).version
    _raw(f"UPDATE {table} SET id = id")
    assert PermissionsVersion.objects.get(pk=1).version != before


@live_only
def test_a_warm_caller_costs_one_query_and_no_cache_round_trip(
    api, carrier, django_assert_num_queries, monkeypatch
):
    """Key, user, agencies and the permissions version in one statement; the permissions
    remembered under that version; /v1/me answers from those alone (issue 18). The throttle
    is the request's one shared-cache round trip."""
    from django.core.cache import cache

    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200

    keys = []

    def spy_on(real):
        def spy(key, *args, **kwargs):
            keys.extend([key] if isinstance(key, str) else key)
            return real(key, *args, **kwargs)

        return spy

    for name in ("get", "get_many", "set", "add"):
        monkeypatch.setattr(cache, name, spy_on(getattr(cache, name)))
    with django_assert_num_queries(1) as captured:
        assert api.get("/v1/me").status_code == 200
    assert "accounts_apikey" in captured.captured_queries[0]["sql"]
    assert keys and all(key.startswith("throttle:") for key in keys)


def test_without_a_version_row_permissions_are_read_every_time(api, carrier):
    from apps.accounts.models import PermissionsVersion

    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    PermissionsVersion.objects.all().delete()
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    Permission.objects.get(codename="view_client").group_set.clear()
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 403)


def test_me_lists_the_callers_agencies_by_name_and_a_superuser_every_agency(
    make_api, groups, django_assert_num_queries, principal_cache
):
    from tests.factories import AgencyFactory, UserFactory

    zulu, alpha, bravo = (AgencyFactory(name=n) for n in ("Zulu Freight", "Alpha", "Bravo"))
    member = make_api(UserFactory(agencies=[zulu, bravo, alpha], groups=[groups[0]]))
    expected = [[alpha.pk, "Alpha"], [bravo.pk, "Bravo"], [zulu.pk, "Zulu Freight"]]
    member.get("/v1/me")
    with django_assert_num_queries(0 if principal_cache else 1):  # the caller's statement
        body = member.get("/v1/me").json()
    assert [[a["id"], a["name"]] for a in body["agencies"]] == expected

    root = UserFactory(is_superuser=True)  # a member of none
    everyone = make_api(root).get("/v1/me").json()["agencies"]
    names = [(a["name"], a["id"]) for a in everyone]
    assert names == sorted(names) and {a["id"] for a in everyone} >= {zulu.pk, alpha.pk, bravo.pk}


SETUP = """
from django.contrib.auth.models import Group, Permission
from apps.agencies.models import Agency, AgencyMembership
from apps.demo.access import groups_ensure
from django.contrib.auth import get_user_model
manager, _ = groups_ensure()
user = get_user_model().objects.create_user("node-user", password="node-password-1")
user.groups.add(manager)
AgencyMembership.objects.create(user=user, agency=Agency.objects.create(name="Node Agency"))
"""
REVOKE = """
from django.contrib.auth.models import Permission
from apps.demo.access import groups_ensure
groups_ensure()[0].permissions.remove(Permission.objects.get(codename="view_client"))
"""


REACTIVATE = """
from django.contrib.auth import get_user_model
user = get_user_model().objects.get(username="node-user")
user.is_active = True
user.save()
"""
DELETE_KEY = """
from apps.accounts.models import ApiKey
ApiKey.objects.filter(name="nodes").delete()
"""


@live_only
@needs_redis
def test_revocations_reach_every_node_sharing_redis(tmp_path, migrated_sqlite):
    """Two gunicorn processes on one Redis, each keeping the caller in it
    (PRINCIPAL_CACHE_SECONDS): a permission removed, a user reactivated and a key deleted
    through Django on a third process take effect on both nodes on their next request; a user
    deactivated in the database behind Django's back, within PRINCIPAL_CACHE_SECONDS."""
    with gunicorn_nodes(tmp_path, migrated_sqlite, PRINCIPAL_CACHE_SECONDS="1") as nodes:
        nodes.manage("load_masterdata")
        key = nodes.manage("create_api_key", "nodes")
        nodes.manage("shell", "-c", SETUP)
        login = {"username": "node-user", "password": "node-password-1"}
        response = nodes.call(0, "/v1/auth/token", {"apiKey": key}, json=login)
        assert response.status_code == 200, response.text
        headers = {"apiKey": key, "Authorization": f"Bearer {response.json()['access']}"}
        for node in (0, 1):  # both nodes cache the caller
            assert nodes.call(node, "/v1/clients", headers).status_code == 200
            assert nodes.call(node, "/v1/clients", headers).status_code == 200

        nodes.manage("shell", "-c", REVOKE)
        for node in (0, 1):
            assert nodes.call(node, "/v1/clients", headers).status_code == 403
        assert all(nodes.call(node, "/v1/me", headers).status_code == 200 for node in (0, 1))

        # Behind Django's back: no signal, so the cached caller serves until it expires.
        with sqlite3.connect(tmp_path / "nodes.sqlite3") as db:
            db.execute("UPDATE auth_user SET is_active = 0 WHERE username = 'node-user'")
        time.sleep(1.2)
        for node in (0, 1):
            assert nodes.call(node, "/v1/me", headers).status_code == 401

        nodes.manage("shell", "-c", REACTIVATE)
        for node in (0, 1):
            assert nodes.call(node, "/v1/me", headers).status_code == 200
            assert nodes.call(node, "/v1/me", headers).status_code == 200

        nodes.manage("shell", "-c", DELETE_KEY)
        for node in (0, 1):
            assert nodes.call(node, "/v1/me", headers).status_code == 401


@live_only
def test_a_remembered_access_token_is_refused_once_it_expires(monkeypatch, api_key, manager):
    """Verified tokens are remembered per process (issue 18) only until their `exp`; a forged
    signature is never remembered as valid."""
    import datetime as dt
    import time

    from rest_framework.test import APIClient
    from rest_framework_simplejwt import tokens

    from apps.accounts import authentication
    from apps.accounts.tokens import AccessToken

    token = AccessToken.for_user(manager)
    client = APIClient()
    client.credentials(HTTP_APIKEY=api_key, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert client.get("/v1/me").status_code == 200
    assert str(token).encode() in authentication._VERIFIED_TOKENS

    # Past the token's `exp` on both clocks (the memo's and simplejwt's): refused.
    later = time.time() + float(token.lifetime.total_seconds()) + 5
    monkeypatch.setattr(authentication.time, "time", lambda: later)
    monkeypatch.setattr(tokens, "aware_utcnow", lambda: dt.datetime.fromtimestamp(later, tz=dt.UTC))
    assert_problem(client.get("/v1/me"), 401)

    forged = str(token)[:-2] + ("AA" if not str(token).endswith("AA") else "BB")
    client.credentials(HTTP_APIKEY=api_key, HTTP_AUTHORIZATION=f"Bearer {forged}")
    monkeypatch.undo()
    assert_problem(client.get("/v1/me"), 401)
    assert forged.encode() not in authentication._VERIFIED_TOKENS
