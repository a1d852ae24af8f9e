"""Contract section 13: revoking access takes effect on the very next request, on every node.

Each test warms the caller's cached principal with a successful request first, changes one
thing by one path (the admin, a service, a queryset, raw SQL), and asserts that the next
request is refused. The cache is the shared one of the settings (in-memory here, Redis in
production; the cross-process case runs two gunicorn processes on one Redis).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client as BrowserClient

from apps.accounts.models import ApiKey, hash_api_key
from apps.agencies.models import AgencyMembership
from tests.accounts.test_auth import assert_problem
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


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
