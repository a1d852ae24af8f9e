"""Contract section 13: revoking access takes effect on the very next request, on every node.

Each test warms the caller's cached principal with a successful request first, changes one
thing by one path (the admin, a service, a queryset, raw SQL), and asserts that the next
request is refused. The cache is the shared one of the settings (in-memory here, Redis in
production; the cross-process case runs two gunicorn processes on one Redis).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client as BrowserClient

from apps.accounts.models import ApiKey, hash_api_key
from apps.agencies.models import AgencyMembership
from tests.accounts.test_auth import assert_problem
from tests.factories import UserFactory
from tests.processes import free_port, wait_for_port

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


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


def test_a_key_deleted_with_raw_sql_is_refused_at_once(api, api_key):
    assert api.get("/v1/clients").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {ApiKey._meta.db_table}")
    body = assert_problem(api.get("/v1/clients"), 401)
    assert "apiKey" in body["detail"]


def test_a_key_revoked_by_update_is_refused_at_once(api, api_key):
    assert api.get("/v1/me").status_code == 200
    ApiKey.objects.update(revoked_at="2026-01-01T00:00:00Z")
    assert_problem(api.get("/v1/me"), 401)


def test_a_deactivated_user_is_refused_at_once(api, manager):
    assert api.get("/v1/me").status_code == 200
    manager.is_active = False
    manager.save()
    assert_problem(api.get("/v1/me"), 401)


def test_a_user_deactivated_with_a_queryset_update_is_refused_at_once(api, manager):
    assert api.get("/v1/me").status_code == 200
    type(manager).objects.filter(pk=manager.pk).update(is_active=False)
    assert_problem(api.get("/v1/me"), 401)


def test_a_deleted_user_is_refused_at_once(api, manager):
    assert api.get("/v1/me").status_code == 200
    manager.delete()
    assert_problem(api.get("/v1/me"), 401)


def test_a_removed_membership_hides_the_agency_at_once(api, manager, carrier):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    AgencyMembership.objects.get(user=manager).delete()
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 404)
    assert api.get("/v1/me").json()["agencies"] == []


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


def test_a_warm_caller_costs_one_query(api, carrier, django_assert_num_queries):
    """Key, user and agencies in one statement; permissions from the cache; then the work."""
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    with django_assert_num_queries(2) as captured:
        assert api.get("/v1/me").status_code == 200
    assert "accounts_apikey" in captured.captured_queries[0]["sql"]


def _call(port: int, path: str, headers: dict, body: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=body,
        method="POST" if body else "GET",
        headers={**headers, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


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


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="Debian's redis-server is needed")
def test_revocations_reach_every_node_sharing_redis(tmp_path):
    """Two gunicorn processes on one Redis: a permission removed through Django on a third
    process, and a user deactivated in the database behind Django's back, are refused by
    both nodes on their next request, although both had the caller cached."""
    redis_port, ports = free_port(), [free_port(), free_port()]
    database = tmp_path / "nodes.sqlite3"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "nodes-test-secret-key-0123456789abcdefghijklmnopqrs",
        "SECURE_SSL_REDIRECT": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{database}",
        "CACHE_URL": f"redis://127.0.0.1:{redis_port}/0",
        "MEDIA_ROOT": str(tmp_path / "media"),
    }
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
    subprocess.run([*manage, "load_masterdata"], env=env, check=True, cwd=ROOT, capture_output=True)
    key = subprocess.run(
        [*manage, "create_api_key", "nodes"],
        env=env,
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    redis = subprocess.Popen(
        ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    servers = []
    try:
        wait_for_port(redis_port, redis)
        subprocess.run([*manage, "shell", "-c", SETUP], env=env, check=True, cwd=ROOT)
        for port in ports:
            servers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "gunicorn",
                        "-c",
                        str(ROOT / "config" / "gunicorn.py"),
                        "--bind",
                        f"127.0.0.1:{port}",
                        "--workers",
                        "1",
                        "config.wsgi",
                    ],
                    env=env,
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for port, server in zip(ports, servers, strict=True):
            wait_for_port(port, server)
        status, body = _call(
            ports[0],
            "/v1/auth/token",
            {"apiKey": key},
            json.dumps({"username": "node-user", "password": "node-password-1"}).encode(),
        )
        assert status == 200, body
        headers = {"apiKey": key, "Authorization": f"Bearer {json.loads(body)['access']}"}
        for port in ports:  # both nodes cache the caller
            assert _call(port, "/v1/clients", headers)[0] == 200
            assert _call(port, "/v1/clients", headers)[0] == 200

        subprocess.run([*manage, "shell", "-c", REVOKE], env=env, check=True, cwd=ROOT)
        for port in ports:
            assert _call(port, "/v1/clients", headers)[0] == 403
        assert all(_call(port, "/v1/me", headers)[0] == 200 for port in ports)

        with sqlite3.connect(database) as db:  # behind Django's back: no signal, no cache bump
            db.execute("UPDATE auth_user SET is_active = 0 WHERE username = 'node-user'")
        for port in ports:
            assert _call(port, "/v1/me", headers)[0] == 401
    finally:
        for server in servers:
            server.terminate()
            server.wait(10)
        redis.terminate()
        redis.wait(10)
