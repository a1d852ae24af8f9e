"""Failed logins are throttled per user name and per client address (contract section 3), also
when the guesses arrive at once: every attempt is counted, atomically, before its password is
checked, so at most LOGIN_FAILURES_PER_USER passwords of a user name are checked in a window
whatever the concurrency, on each cache back-end the settings select (the in-memory one of the
tests, Redis in production, the database's table by default).

Before, the limit was read before the password check and a failure recorded after it with a
get and a set: 12 wrong passwords sent at once were all checked (all 401), and on Redis 8
failures were counted as 7.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from django.core.management import call_command
from django.db import connection
from django.test.utils import override_settings
from rest_framework.test import APIClient

from tests.conftest import API_KEY, assert_problem
from tests.processes import needs_redis

# Transactional: the request threads have connections of their own and must see the user.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("master_data_back")]

GUESSES = 12
# A password check as slow as a real hasher's (PBKDF2 takes a good part of a second), without
# its CPU: every guess of the burst is in flight before the first one's check ends.
CHECK_SECONDS = 0.3


@pytest.fixture
def checked(monkeypatch) -> list[str]:
    """The passwords checked against a stored hash from now on (each check is slow)."""
    passwords: list[str] = []
    verify = MD5PasswordHasher.verify

    def slow_verify(self, password, encoded):
        passwords.append(password)
        time.sleep(CHECK_SECONDS)
        return verify(self, password, encoded)

    monkeypatch.setattr(MD5PasswordHasher, "verify", slow_verify)
    return passwords


def _login(password: str, username: str = "manager"):
    client = APIClient()
    client.credentials(HTTP_APIKEY=API_KEY)
    return client.post(
        "/v1/auth/token", {"username": username, "password": password}, format="json"
    )


def _at_once(passwords: list[str]) -> list:
    """Each password sent as a login of `manager` from its own thread, all at the same moment;
    the answers."""
    start = threading.Barrier(len(passwords))
    answers: list = []

    def attempt(password: str) -> None:
        try:
            start.wait()
            answers.append(_login(password))
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(p,)) for p in passwords]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers


def _burst_checks_at_most_the_limit(settings, checked) -> None:
    limit = settings.LOGIN_FAILURES_PER_USER
    answers = _at_once([f"guess-{n}" for n in range(GUESSES)])
    assert Counter(a.status_code for a in answers) == {401: limit, 429: GUESSES - limit}
    assert len(checked) == limit  # the refused ones' passwords were never checked
    for answer in answers:
        if answer.status_code == 429:
            assert_problem(answer, 429)
            assert 0 < int(answer["Retry-After"]) <= settings.LOGIN_FAILURE_WINDOW_SECONDS
    # The right password, now: refused as well, and not checked.
    assert_problem(_login("secret-password"), 429)
    assert len(checked) == limit


def test_a_burst_of_wrong_passwords_checks_at_most_the_limit(api_key, manager, settings, checked):
    _burst_checks_at_most_the_limit(settings, checked)


@needs_redis
def test_a_burst_of_wrong_passwords_checks_at_most_the_limit_on_redis(
    api_key, manager, settings, checked, redis_url
):
    redis_cache = {"default": {"BACKEND": "apps.core.cache.RedisCache", "LOCATION": redis_url}}
    with override_settings(CACHES=redis_cache):  # restored before this Redis stops
        _burst_checks_at_most_the_limit(settings, checked)


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the database cache from threads needs a server"
)
def test_a_burst_of_wrong_passwords_checks_at_most_the_limit_on_the_database_cache(
    api_key, manager, settings, checked
):
    database_cache = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "django_cache",
        }
    }
    with override_settings(CACHES=database_cache):
        call_command("createcachetable", verbosity=0)  # as the settings' default does
        _burst_checks_at_most_the_limit(settings, checked)


def test_a_success_does_not_count_against_the_address(api_key, manager, settings, checked):
    # Twenty right logins from one address (an office behind one NAT) are not failures.
    settings.LOGIN_FAILURES_PER_ADDRESS = 3
    for _ in range(5):
        assert _login("secret-password").status_code == 200
    assert _login("wrong").status_code == 401
    assert _login("secret-password").status_code == 200


def test_a_success_clears_the_failures_before_it(api_key, manager, settings, checked):
    limit = settings.LOGIN_FAILURES_PER_USER
    for _ in range(limit - 1):
        assert _login("wrong").status_code == 401
    assert _login("secret-password").status_code == 200
    for _ in range(limit):
        assert _login("wrong").status_code == 401
    assert_problem(_login("secret-password"), 429)


def test_a_success_in_the_middle_of_a_burst_does_not_reopen_it(api_key, manager, settings, checked):
    """A right password sent with a burst of wrong ones forgets only the attempts counted before
    it: the guesses counted after it still hold their places, so the burst's wrong passwords
    checked stay within the limit before and the limit after the success."""
    limit = settings.LOGIN_FAILURES_PER_USER
    passwords = ["secret-password", *(f"guess-{n}" for n in range(GUESSES))]
    answers = _at_once(passwords)
    statuses = Counter(a.status_code for a in answers)
    wrong_checked = [p for p in checked if p != "secret-password"]
    assert statuses[200] <= 1
    assert len(wrong_checked) <= 2 * limit - 1, statuses
    assert statuses[401] == len(wrong_checked)


def test_refused_attempts_are_not_failures_of_the_address(
    api_key, manager, viewer, settings, checked
):
    # A user who keeps trying a locked name does not lock everyone behind the same address.
    settings.LOGIN_FAILURES_PER_ADDRESS = 8
    limit = settings.LOGIN_FAILURES_PER_USER
    for _ in range(limit):
        assert _login("wrong").status_code == 401
    for _ in range(10):
        assert_problem(_login("secret-password"), 429)
    assert _login("wrong", username="viewer").status_code == 401  # 6th failure of the address
    assert len(checked) == limit + 1
