"""Rate limits per API key and per user: 429 with Retry-After, counted in the shared cache."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework.test import APIClient

from apps.accounts import rate_limits
from apps.accounts.rate_limits import CallerRateThrottle
from apps.accounts.services import api_key_create
from apps.core import cache as core_cache
from apps.core.cache import RedisCache
from tests.conftest import assert_problem, bearer_for
from tests.processes import gunicorn_nodes, needs_redis

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_an_api_key_is_limited_across_users(monkeypatch, make_api, manager, viewer):
    monkeypatch.setattr(CallerRateThrottle, "api_key_rate", "3/minute")
    first, second = make_api(manager), make_api(viewer)
    for api in (first, second, first):
        assert api.get("/v1/me").status_code == 200
    response = second.get("/v1/me")
    assert_problem(response, 429)
    assert 0 < int(response["Retry-After"]) <= 60


@pytest.mark.django_db
def test_a_user_is_limited_across_api_keys(monkeypatch, api_key, manager):
    monkeypatch.setattr(CallerRateThrottle, "user_rate", "2/minute")
    _, other_key = api_key_create(name="second integration")
    token = bearer_for(manager)
    clients = []
    for key in (api_key, other_key, api_key):
        client = APIClient()
        client.credentials(HTTP_APIKEY=key, HTTP_AUTHORIZATION=f"Bearer {token}")
        clients.append(client)
    assert clients[0].get("/v1/me").status_code == 200
    assert clients[1].get("/v1/me").status_code == 200
    assert_problem(clients[2].get("/v1/me"), 429)


@needs_redis
def test_the_limit_holds_across_two_gunicorn_processes_sharing_redis(tmp_path, migrated_sqlite):
    rates = {"THROTTLE_API_KEY_RATE": "6/minute", "THROTTLE_USER_RATE": "1000/minute"}
    with gunicorn_nodes(tmp_path, migrated_sqlite, **rates) as nodes:
        key = nodes.manage("create_api_key", "throttle")

        # Token requests carry only the API key: six are allowed per minute, across both.
        def attempt(node, n):
            login = {"username": f"ghost{n}", "password": "wrong"}
            return nodes.call(node, "/v1/auth/token", {"apiKey": key}, json=login)

        answers = [attempt(n % 2, n) for n in range(6)]
        assert [answer.status_code for answer in answers] == [401] * 6  # counted against the key
        # Each answer shows what is left of the key's limit, counted on both nodes.
        assert [answer.headers["RateLimit-Remaining"] for answer in answers] == [
            "5",
            "4",
            "3",
            "2",
            "1",
            "0",
        ]
        assert {answer.headers["RateLimit-Policy"] for answer in answers} == {"6;w=60"}
        response = attempt(0, 6)
        assert response.status_code == 429
        assert int(response.headers["Retry-After"]) > 0
        assert response.headers["RateLimit-Remaining"] == "0"
        assert response.headers["RateLimit-Reset"] == response.headers["Retry-After"]
        assert response.headers["Content-Type"].startswith("application/problem+json")
        assert attempt(1, 7).status_code == 429


@needs_redis
def test_the_redis_round_trip_counts_per_caller_and_recovers(redis_url):
    """The throttle's lean EVALSHA (one connection per thread, the command packed once per
    caller): limits stay per key, a script flushed from Redis is loaded again, a connection
    Redis dropped is made again, and each thread uses a connection of its own."""
    client = RedisCache(redis_url, {})._cache.get_client(write=True)
    script = client.register_script(rate_limits._SCRIPT)
    limit = [60, 3]  # 3 per minute
    answers = [rate_limits._run_script(script, ["k:a"], limit) for _ in range(3)]
    assert [answer.wait for answer in answers] == [0, 0, 0]
    assert [answer.remaining for answer in answers] == [2, 1, 0]
    assert all(answer[1:3] == (3, 60) and 0 < answer.reset <= 60 for answer in answers)
    refused = rate_limits._run_script(script, ["k:a"], limit)
    assert 0 < refused.wait <= 60  # the fourth waits
    assert refused == (refused.wait, 3, 60, 0, refused.wait)
    assert rate_limits._run_script(script, ["k:b"], limit).wait == 0  # another caller's count

    client.script_flush()
    assert rate_limits._run_script(script, ["k:b"], limit).wait == 0
    client.client_kill_filter(_type="normal", skipme=True)  # every other connection dropped
    assert rate_limits._run_script(script, ["k:b"], limit).wait == 0
    assert rate_limits._run_script(script, ["k:b"], limit).wait > 0
    assert client.zcard("k:a") == 3 and client.zcard("k:b") == 3

    # Two callers at once (a user's limit and a key's) in another thread, on its own connection.
    answers = []
    worker = threading.Thread(
        target=lambda: answers.append(
            (
                rate_limits._run_script(script, ["k:c", "k:a"], [60, 5, *limit]),
                core_cache.thread_connection(client),
            )
        )
    )
    worker.start()
    worker.join()
    assert answers[0][0].wait > 0  # k:a is full: refused, and k:c not counted
    assert answers[0][0][1:4] == (3, 60, 0)  # the limit that refused
    assert answers[0][1] is not core_cache.thread_connection(client)
    assert client.zcard("k:c") == 0


@needs_redis
def test_the_script_shows_the_limit_the_caller_is_closest_to(redis_url):
    client = RedisCache(redis_url, {})._cache.get_client(write=True)
    script = client.register_script(rate_limits._SCRIPT)
    limits = [60, 100, 3600, 4]  # 100 a minute (the key's), 4 an hour (the user's)
    first = rate_limits._run_script(script, ["k:key", "k:user"], limits)
    assert first[:4] == (0, 4, 3600, 3) and 3590 < first.reset <= 3600
    for _ in range(3):
        last = rate_limits._run_script(script, ["k:key", "k:user"], limits)
    assert last[:4] == (0, 4, 3600, 0)
    other_user = rate_limits._run_script(script, ["k:key", "k:other"], [60, 100, 3600, 400])
    assert other_user[:4] == (0, 100, 60, 95)  # the key's five requests of this minute
    refused = rate_limits._run_script(script, ["k:key", "k:user"], limits)
    assert refused.wait > 0 and refused[1:4] == (4, 3600, 0)
    assert client.zcard("k:key") == 5  # a refused request is not counted


@needs_redis
def test_an_answer_lost_after_sending_is_not_counted_twice(redis_url, monkeypatch):
    """The script ran but its answer was lost (a timeout, a connection lost while reading): the
    request fails as when Redis is down rather than running the script again, and the next
    request connects again."""
    monkeypatch.setattr(core_cache, "_thread", threading.local())  # this test's Redis
    client = RedisCache(redis_url, {})._cache.get_client(write=True)
    script = client.register_script(rate_limits._SCRIPT)
    limit = [60, 4]
    connection = core_cache.thread_connection(client)
    read = connection.read_response
    for error in (RedisTimeoutError("Timeout reading"), RedisConnectionError("lost")):
        # Connected (again) by a request that goes through, then one whose answer is lost.
        assert rate_limits._run_script(script, ["k:lost"], limit).wait == 0

        def answer_lost(*args, error=error, **kwargs):
            read(*args, **kwargs)  # the script ran and answered
            raise error

        with monkeypatch.context() as patch, pytest.raises(type(error)):
            patch.setattr(connection, "read_response", answer_lost)
            rate_limits._run_script(script, ["k:lost"], limit)
        assert connection._sock is None  # dropped: whatever arrives later is not read
    assert client.zcard("k:lost") == 4  # four requests, one count each
    assert rate_limits._run_script(script, ["k:lost"], limit).wait > 0  # full, on a new connection


@needs_redis
def test_a_command_not_sent_goes_through_redis_py_once(redis_url, monkeypatch):
    """An error while sending (nothing reached Redis) and a connection Redis closed while it was
    idle (found before sending) both count the request exactly once."""
    monkeypatch.setattr(core_cache, "_thread", threading.local())  # this test's Redis
    client = RedisCache(redis_url, {})._cache.get_client(write=True)
    script = client.register_script(rate_limits._SCRIPT)
    limit = [60, 5]
    assert rate_limits._run_script(script, ["k:send"], limit).wait == 0
    connection = core_cache.thread_connection(client)

    def broken_send(*args, **kwargs):
        connection.disconnect()
        raise RedisConnectionError("Error 32 while writing to socket. Broken pipe.")

    with monkeypatch.context() as patch:
        patch.setattr(connection, "send_packed_command", broken_send)
        assert rate_limits._run_script(script, ["k:send"], limit).wait == 0
    assert client.zcard("k:send") == 2

    assert rate_limits._run_script(script, ["k:send"], limit).wait == 0  # reconnected
    client.client_kill_filter(_type="normal", skipme=True)  # closed while idle
    assert rate_limits._run_script(script, ["k:send"], limit).wait == 0
    assert client.zcard("k:send") == 4


def _limit_headers(response) -> tuple[str, str, str]:
    return tuple(response[f"RateLimit-{name}"] for name in ("Limit", "Remaining", "Policy"))


@pytest.mark.django_db
def test_every_counted_answer_shows_what_is_left_of_the_limit(monkeypatch, api):
    monkeypatch.setattr(CallerRateThrottle, "api_key_rate", "3/minute")
    monkeypatch.setattr(CallerRateThrottle, "user_rate", "100/minute")
    answers = [
        api.get("/v1/me"),
        api.get("/v1/clients?limit=1"),
        api.post("/v1/clients", {}, format="json"),
    ]
    assert [answer.status_code for answer in answers] == [200, 200, 400]
    assert [_limit_headers(answer) for answer in answers] == [
        ("3", "2", "3;w=60"),
        ("3", "1", "3;w=60"),
        ("3", "0", "3;w=60"),
    ]
    assert all(0 < int(answer["RateLimit-Reset"]) <= 60 for answer in answers)
    refused = api.get("/v1/me")
    assert_problem(refused, 429)
    assert _limit_headers(refused) == ("3", "0", "3;w=60")
    assert refused["RateLimit-Reset"] == refused["Retry-After"]


@pytest.mark.django_db
def test_the_headers_show_the_limit_the_caller_is_closest_to(
    monkeypatch, make_api, manager, viewer
):
    monkeypatch.setattr(CallerRateThrottle, "api_key_rate", "10/minute")
    monkeypatch.setattr(CallerRateThrottle, "user_rate", "2/hour")
    first, second = make_api(manager), make_api(viewer)
    assert _limit_headers(first.get("/v1/me")) == ("2", "1", "2;w=3600")  # the user's
    assert _limit_headers(second.get("/v1/me")) == ("2", "1", "2;w=3600")  # its own user's
    response = first.get("/v1/me")
    assert _limit_headers(response) == ("2", "0", "2;w=3600")
    assert 3590 < int(response["RateLimit-Reset"]) <= 3600
    monkeypatch.setattr(CallerRateThrottle, "user_rate", "100/hour")
    assert _limit_headers(second.get("/v1/me")) == ("10", "6", "10;w=60")  # now the key's


@pytest.mark.django_db
def test_an_answer_not_counted_shows_no_limit(make_api, api_key):
    anonymous = APIClient()
    refused = anonymous.get("/v1/me")  # no API key: refused before any count
    assert_problem(refused, 401)
    assert not refused.has_header("RateLimit-Limit")
    token_only = make_api()  # the key alone, on a route that needs a user
    answer = token_only.get("/v1/me")
    assert_problem(answer, 401)
    assert not answer.has_header("RateLimit-Remaining")
    login = token_only.post(
        "/v1/auth/token", {"username": "nobody", "password": "x"}, format="json"
    )
    assert_problem(login, 401)  # a token request is counted against its key
    assert login["RateLimit-Policy"].endswith(";w=60")


@pytest.mark.django_db
def test_a_login_held_back_for_failures_shows_only_its_own_wait(make_api, manager, settings):
    settings.LOGIN_FAILURES_PER_USER = 2
    api = make_api()
    wrong = {"username": manager.username, "password": "wrong"}
    for _ in range(2):
        failed = api.post("/v1/auth/token", wrong, format="json")
        assert_problem(failed, 401)
        assert failed.has_header("RateLimit-Remaining")  # counted against the key
    held = api.post("/v1/auth/token", wrong, format="json")
    assert_problem(held, 429)
    assert int(held["Retry-After"]) > 2
    assert not held.has_header("RateLimit-Reset") and not held.has_header("RateLimit-Limit")


class _SlowGets:
    """The shared cache with its reads slowed: every request of a burst reads before any
    writes, as on a loaded node."""

    def __init__(self, cache):
        self._cache = cache

    def get(self, *args, **kwargs):
        import time

        value = self._cache.get(*args, **kwargs)
        time.sleep(0.05)
        return value

    def __getattr__(self, name):
        return getattr(self._cache, name)


def _burst_allows_at_most_the_rate(monkeypatch, api_key, manager) -> None:
    from collections import Counter

    from django.core.cache import cache
    from django.db import connection

    monkeypatch.setattr(CallerRateThrottle, "api_key_rate", "5/minute")
    monkeypatch.setattr(rate_limits, "cache", _SlowGets(cache))
    token = bearer_for(manager)
    start = threading.Barrier(12)
    statuses: list[int] = []

    def call() -> None:
        client = APIClient()
        client.credentials(HTTP_APIKEY=api_key, HTTP_AUTHORIZATION=f"Bearer {token}")
        try:
            start.wait()
            statuses.append(client.get("/v1/me").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=call) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert Counter(statuses) == {200: 5, 429: 7}


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("master_data_back")
def test_a_burst_is_allowed_at_most_the_rate_without_redis(monkeypatch, api_key, manager):
    """Without Redis the limit is read and written under one lock (the in-memory cache of the
    tests: this process's; the database cache: the counter's lock): a read, then a write, let
    every request of a burst read the same history and pass."""
    _burst_allows_at_most_the_rate(monkeypatch, api_key, manager)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("master_data_back")
def test_a_burst_is_allowed_at_most_the_rate_on_the_database_cache(monkeypatch, api_key, manager):
    from django.core.cache import caches
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import override_settings

    if connection.vendor != "postgresql":
        pytest.skip("the database cache from threads needs a server")
    database_cache = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "django_cache",
        }
    }
    with override_settings(CACHES=database_cache):
        call_command("createcachetable", verbosity=0)
        # The table outlives the tests (no model's flush empties it): an earlier test's requests
        # with the same key would be counted here.
        caches["default"].clear()
        _burst_allows_at_most_the_rate(monkeypatch, api_key, manager)
