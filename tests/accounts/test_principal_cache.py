"""The caller kept in the shared cache (PRINCIPAL_CACHE_SECONDS > 0, apps.accounts.principal).

tests/accounts/test_principal.py runs every change made through Django in both modes; these
are what only the cached mode has: its cost, the generation that retires every entry, and the
bound on a change made behind Django's back.
"""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.cache.backends import locmem
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from apps.accounts import principal
from apps.accounts.models import ApiKey, hash_api_key
from apps.accounts.services import api_key_revoke
from apps.agencies.models import AgencyMembership
from tests.conftest import assert_problem
from tests.processes import needs_redis

# Transactional: writes commit, so the principals' generation moves as it does in production.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("master_data_back")]
SECONDS = 30


@pytest.fixture(autouse=True)
def cached(settings):
    settings.PRINCIPAL_CACHE_SECONDS = SECONDS
    cache.clear()


def _cache_calls(monkeypatch) -> list[tuple[str, list[str]]]:
    """(method, keys) of every cache call the test makes from now on (the in-memory cache's
    `get_many` asks `get` for each key: only the outer call is listed)."""
    calls: list[tuple[str, list[str]]] = []
    depth = [0]

    def spy_on(name, real):
        def spy(key, *args, **kwargs):
            if not depth[0]:
                calls.append((name, [key] if isinstance(key, str) else list(key)))
            depth[0] += 1
            try:
                return real(key, *args, **kwargs)
            finally:
                depth[0] -= 1

        return spy

    for name in ("get", "get_many", "set", "add", "delete", "delete_many"):
        monkeypatch.setattr(cache, name, spy_on(name, getattr(cache, name)))
    return calls


def _raw(sql: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _later(monkeypatch, seconds: float) -> None:
    """The in-memory cache's clock, `seconds` on."""
    now = locmem.time.time()
    monkeypatch.setattr(locmem.time, "time", lambda: now + seconds)


def test_a_warm_caller_costs_no_query_and_one_cache_read(
    api, carrier, django_assert_num_queries, monkeypatch
):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    calls = _cache_calls(monkeypatch)
    with django_assert_num_queries(0):
        body = api.get("/v1/me").json()
    assert body["username"] == "manager" and [a["name"] for a in body["agencies"]] == [
        "Demo Agency"
    ]
    assert "clients.view_client" in body["permissions"]
    reads = [keys for _name, keys in calls if keys[0].startswith("principal:")]
    assert calls[0][0] == "get_many" and reads == [calls[0][1]]
    assert reads[0][0] == principal.GENERATION_KEY and reads[0][1].startswith("principal:")
    assert all(keys[0].startswith("throttle:") for _name, keys in calls[1:])


def test_a_cold_caller_reads_the_statement_once_and_keeps_it(api, django_assert_num_queries):
    with CaptureQueriesContext(connection) as cold:
        assert api.get("/v1/me").status_code == 200
    assert sum(ApiKey._meta.db_table in query["sql"] for query in cold.captured_queries) == 1
    with django_assert_num_queries(0):
        assert api.get("/v1/me").status_code == 200


def test_a_refused_caller_is_never_kept(make_api, manager, django_assert_num_queries):
    api = make_api(manager)
    type(manager).objects.filter(pk=manager.pk).update(is_active=False)
    for _ in range(2):
        with django_assert_num_queries(1):
            assert_problem(api.get("/v1/me"), 401)
    assert not [key for key in cache._cache if ":principal:" in key and "generation" not in key]


def test_a_key_deleted_with_raw_sql_is_refused_within_the_cache_seconds(api, api_key, monkeypatch):
    """Behind Django's back: no signal, so the kept caller serves until it expires."""
    assert api.get("/v1/clients").status_code == 200
    _raw(f"DELETE FROM {ApiKey._meta.db_table}")
    assert api.get("/v1/clients").status_code == 200
    _later(monkeypatch, SECONDS + 1)
    body = assert_problem(api.get("/v1/clients"), 401)
    assert "apiKey" in body["detail"]


def test_a_membership_removed_with_raw_sql_hides_the_agency_within_the_cache_seconds(
    api, manager, carrier, monkeypatch
):
    assert api.get(f"/v1/clients/{carrier.pk}").status_code == 200
    _raw(f"DELETE FROM {AgencyMembership._meta.db_table} WHERE user_id = %s", [manager.pk])
    _later(monkeypatch, SECONDS + 1)
    assert_problem(api.get(f"/v1/clients/{carrier.pk}"), 404)


def test_a_change_committed_while_the_statement_is_read_is_never_kept(
    api, api_key, manager, monkeypatch
):
    """The entry is kept under the generation read before the statement: a key revoked
    between the two (which moves the generation) retires the entry being written."""
    real = principal.caller_row

    def revoked_meanwhile(**kwargs):
        answer = real(**kwargs)
        api_key_revoke(api_key=ApiKey.objects.get(key_hash=hash_api_key(api_key)))
        return answer

    assert api.get("/v1/me").status_code == 200
    cache.delete(f"principal:{principal.ENTRY_LAYOUT}:{hash_api_key(api_key)}:{manager.pk}")
    monkeypatch.setattr(principal, "caller_row", revoked_meanwhile)
    assert api.get("/v1/me").status_code == 200  # read before the revocation
    monkeypatch.setattr(principal, "caller_row", real)
    assert_problem(api.get("/v1/me"), 401)


def test_a_lost_generation_is_made_again_and_retires_every_entry(api, django_assert_num_queries):
    assert api.get("/v1/me").status_code == 200
    assert api.get("/v1/me").status_code == 200
    before = cache.get(principal.GENERATION_KEY)
    cache.delete(principal.GENERATION_KEY)  # evicted or flushed; the entry is still there
    with django_assert_num_queries(1):
        assert api.get("/v1/me").status_code == 200
    after = cache.get(principal.GENERATION_KEY)
    assert after is not None and after != before
    with django_assert_num_queries(1):  # the entry of the lost generation is not used
        assert api.get("/v1/me").status_code == 200
    with django_assert_num_queries(0):
        assert api.get("/v1/me").status_code == 200


def test_a_login_does_not_retire_the_cached_callers(api, manager):
    """Only `last_login` saved: nothing a caller is changed."""
    from django.contrib.auth.models import update_last_login

    assert api.get("/v1/me").status_code == 200
    before = cache.get(principal.GENERATION_KEY)
    update_last_login(None, manager)
    assert cache.get(principal.GENERATION_KEY) == before
    manager.username = "renamed"
    manager.save()
    assert cache.get(principal.GENERATION_KEY) != before
    assert api.get("/v1/me").json()["username"] == "renamed"


def test_a_password_change_retires_the_cached_callers_and_the_cache_holds_no_hash(
    make_api, manager, django_assert_num_queries
):
    """The token's password digest is compared with the one kept in the entry: a password
    saved moves the generation, so the next request reads the database and refuses the old
    token. What is kept is a digest, never the password hash."""
    old = make_api(manager)
    assert old.get("/v1/me").status_code == 200
    with django_assert_num_queries(0):
        assert old.get("/v1/me").status_code == 200
    assert not [value for value in cache._cache.values() if manager.password.encode() in value]
    before = cache.get(principal.GENERATION_KEY)
    manager.set_password("a-new-password-9431")
    manager.save(update_fields=["password"])
    assert cache.get(principal.GENERATION_KEY) != before
    with django_assert_num_queries(1):
        assert_problem(old.get("/v1/me"), 401)
    new = make_api(manager)
    assert new.get("/v1/me").status_code == 200
    with django_assert_num_queries(0):
        assert new.get("/v1/me").status_code == 200
    assert not [value for value in cache._cache.values() if manager.password.encode() in value]


def test_an_agency_renamed_shows_at_once(api, agency):
    assert api.get("/v1/me").json()["agencies"][0]["name"] == "Demo Agency"
    agency.name = "Renamed Agency"
    agency.save()
    assert api.get("/v1/me").json()["agencies"][0]["name"] == "Renamed Agency"


def test_a_rolled_back_change_leaves_the_callers_as_they_were(api, api_key):
    from django.db import transaction

    assert api.get("/v1/me").status_code == 200
    with pytest.raises(RuntimeError), transaction.atomic():
        ApiKey.objects.filter(key_hash=hash_api_key(api_key)).delete()
        raise RuntimeError
    assert api.get("/v1/me").status_code == 200


@needs_redis
def test_on_redis_the_caller_is_one_mget_on_the_threads_connection(
    redis_url, api, api_key, django_assert_num_queries, monkeypatch
):
    """The lean round trip (apps.core.cache.send_packed) against a real Redis: a warm caller
    costs no query, a key deleted through Django is refused at once, and a connection Redis
    dropped is made again."""
    import threading

    from apps.core import cache as core_cache

    monkeypatch.setattr(core_cache, "_thread", threading.local())  # this test's Redis
    redis_cache = {"default": {"BACKEND": "apps.core.cache.RedisCache", "LOCATION": redis_url}}
    with override_settings(CACHES=redis_cache):  # restored before this Redis stops
        for _ in range(2):  # the first makes the generation, the second keeps the caller
            assert api.get("/v1/me").status_code == 200
        with django_assert_num_queries(0):
            assert api.get("/v1/me").status_code == 200

        client = cache._cache.get_client(write=True)
        client.client_kill_filter(_type="normal", skipme=True)  # every other connection dropped
        with django_assert_num_queries(0):
            assert api.get("/v1/me").status_code == 200

        ApiKey.objects.filter(key_hash=hash_api_key(api_key)).delete()
        assert_problem(api.get("/v1/me"), 401)


@needs_redis
def test_on_redis_a_password_change_ends_the_tokens_issued_before_it(
    redis_url, make_api, manager, monkeypatch
):
    import threading

    from apps.core import cache as core_cache

    monkeypatch.setattr(core_cache, "_thread", threading.local())  # this test's Redis
    redis_cache = {"default": {"BACKEND": "apps.core.cache.RedisCache", "LOCATION": redis_url}}
    with override_settings(CACHES=redis_cache):  # restored before this Redis stops
        old = make_api(manager)
        for _ in range(3):  # made the generation, kept the caller, read it from Redis
            assert old.get("/v1/me").status_code == 200
        manager.set_password("a-new-password-9431")
        manager.save()
        assert_problem(old.get("/v1/me"), 401)
        new = make_api(manager)
        for _ in range(3):
            assert new.get("/v1/me").status_code == 200
        client = cache._cache.get_client(write=True)
        values = [client.get(key) for key in client.keys("*")]
        assert not [value for value in values if manager.password.encode() in value]


def test_a_cache_of_one_process_is_refused_by_the_system_checks(settings):
    from apps.accounts.checks import principal_cache_is_shared

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert [error.id for error in principal_cache_is_shared()] == ["accounts.E001"]
    settings.PRINCIPAL_CACHE_SECONDS = 0
    assert principal_cache_is_shared() == []
    settings.PRINCIPAL_CACHE_SECONDS = SECONDS
    redis = {"default": {"BACKEND": "apps.core.cache.RedisCache", "LOCATION": "redis://x"}}
    with override_settings(CACHES=redis):  # never connected to
        assert principal_cache_is_shared() == []


def _generation_sets(monkeypatch) -> list[str]:
    """The values the principals' generation is given from now on."""
    values: list[str] = []
    real = cache.set

    def spy(key, value, *args, **kwargs):
        if key == principal.GENERATION_KEY:
            values.append(value)
        return real(key, value, *args, **kwargs)

    monkeypatch.setattr(cache, "set", spy)
    return values


def _kept_entries() -> list[str]:
    return [key for key in cache._cache if ":principal:" in key and "generation" not in key]


def test_a_transaction_keeps_the_generation_pending_until_it_commits(api, api_key, monkeypatch):
    """Made pending by its first write, once however many rows it writes; nothing is kept
    while pending; a new value when it commits."""
    from django.db import transaction

    from apps.agencies.models import Agency
    from tests.factories import UserFactory

    assert api.get("/v1/me").status_code == 200
    agency = Agency.objects.create(name="Three members")
    for n in range(3):
        UserFactory(username=f"member-{n}", agencies=[agency])
    moves = _generation_sets(monkeypatch)
    cache.delete_many([key.split(":", 2)[2] for key in _kept_entries()])
    with transaction.atomic():
        agency.delete()  # the agency and its three memberships: four rows
        assert str(cache.get(principal.GENERATION_KEY)).startswith(principal.PENDING)
        assert api.get("/v1/me").status_code == 200  # read, not kept
        assert _kept_entries() == []
    assert len(moves) == 2 and moves[0].startswith(principal.PENDING)
    assert not moves[1].startswith(principal.PENDING)
    assert cache.get(principal.GENERATION_KEY) == moves[1]
    assert api.get("/v1/me").status_code == 200
    assert len(_kept_entries()) == 1


def test_a_lost_commit_move_leaves_no_entry_older_than_the_change(
    api, api_key, monkeypatch, django_assert_num_queries
):
    """The move at commit lost (the cache unreachable then, the process killed): the
    generation stays pending, so every caller is read live until it expires; then a new one."""
    assert api.get("/v1/me").status_code == 200
    monkeypatch.setattr(principal, "_generation_after_commit", lambda: None)
    api_key_revoke(api_key=ApiKey.objects.get(key_hash=hash_api_key(api_key)))
    assert str(cache.get(principal.GENERATION_KEY)).startswith(principal.PENDING)
    assert_problem(api.get("/v1/me"), 401)

    other = make_caller()
    assert other.get("/v1/me").status_code == 200  # its permissions read once
    for _ in range(2):
        with django_assert_num_queries(1):  # the caller's statement, never an entry
            assert other.get("/v1/me").status_code == 200
    _later(monkeypatch, principal.PENDING_SECONDS + 1)  # the pending generation expires
    assert other.get("/v1/me").status_code == 200  # makes a new generation
    assert other.get("/v1/me").status_code == 200  # kept under it
    with django_assert_num_queries(0):
        assert other.get("/v1/me").status_code == 200


def make_caller():
    """A second caller of the agency, with its own key."""
    from rest_framework.test import APIClient

    from apps.accounts.services import api_key_create
    from apps.agencies.models import Agency
    from tests.conftest import bearer_for
    from tests.factories import UserFactory

    user = UserFactory(username="second", agencies=[Agency.objects.get(name="Demo Agency")])
    _key, raw = api_key_create(name="second")
    client = APIClient()
    client.credentials(HTTP_APIKEY=raw, HTTP_AUTHORIZATION=f"Bearer {bearer_for(user)}")
    return client


@pytest.mark.parametrize("seconds", [0, SECONDS])
def test_a_revocation_never_fails_for_the_shared_cache(
    api, api_key, settings, monkeypatch, caplog, seconds
):
    """The cache unreachable: the key is revoked all the same (and nothing is asked of the
    cache when callers are read live)."""
    settings.PRINCIPAL_CACHE_SECONDS = seconds
    calls = []

    def unreachable(*args, **kwargs):
        calls.append(args)
        raise ConnectionError("Redis is down")

    monkeypatch.setattr(cache, "set", unreachable)
    key = ApiKey.objects.get(key_hash=hash_api_key(api_key))
    api_key_revoke(api_key=key)
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert bool(calls) == bool(seconds)
    assert bool(seconds) == ("could not be moved" in caplog.text)
