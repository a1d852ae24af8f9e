"""The back-office login shares the API login's failed-login limit (docs/api_intro.md): the
same counts per user name and per client address, so neither door walks around the other.

Past either limit the admin login page answers 429 with the form and says so, without
checking the password; a success forgets the failures before it, as the API's does.
"""

from __future__ import annotations

import pytest
from django.test import Client

from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

ADMIN_LOGIN = "/admin/login/?next=/admin/"
RIGHT = "secret-password"


def admin_login(browser: Client, username: str, password: str, **headers):
    return browser.post(
        ADMIN_LOGIN, {"username": username, "password": password, "next": "/admin/"}, **headers
    )


def api_login(make_api, username: str, password: str):
    return make_api().post(
        "/v1/auth/token", {"username": username, "password": password}, format="json"
    )


def logged_in(browser: Client) -> bool:
    return browser.get("/admin/").status_code == 200


def assert_refused(response):
    """The login page again, as a 429 with its form, saying why; nobody logged in."""
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    page = response.content.decode()
    assert 'name="password"' in page
    assert "Too many failed logins" in page


def test_admin_login_failures_are_limited_per_user_name(staff, settings):
    browser = Client()
    for _ in range(settings.LOGIN_FAILURES_PER_USER):
        assert admin_login(browser, "staff", "wrong").status_code == 200
    assert_refused(admin_login(browser, "staff", "wrong"))
    # Past the limit even the right password is not checked: no login.
    assert_refused(admin_login(browser, "staff", RIGHT))
    assert not logged_in(browser)


def test_api_login_failures_lock_the_admin_login(staff, make_api, settings):
    for _ in range(settings.LOGIN_FAILURES_PER_USER):
        assert api_login(make_api, "staff", "wrong").status_code == 401
    browser = Client()
    assert_refused(admin_login(browser, "staff", RIGHT))
    assert not logged_in(browser)


def test_admin_login_failures_lock_the_api_login(staff, make_api, settings):
    browser = Client()
    for _ in range(settings.LOGIN_FAILURES_PER_USER):
        assert admin_login(browser, "staff", "wrong").status_code == 200
    assert_problem(api_login(make_api, "staff", RIGHT), 429)


def test_admin_login_failures_are_limited_per_client_address(staff, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 3
    browser = Client()
    for n in range(3):
        assert admin_login(browser, f"ghost{n}", "wrong").status_code == 200
    assert_refused(admin_login(browser, "staff", RIGHT))
    assert not logged_in(browser)
    # Another client address is not held back by this one's failures.
    assert admin_login(Client(REMOTE_ADDR="198.51.100.9"), "staff", RIGHT).status_code == 302


def test_admin_and_api_failures_share_the_address_count(staff, make_api, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 3
    for n in range(2):
        assert api_login(make_api, f"ghost{n}", "wrong").status_code == 401
    browser = Client()
    assert admin_login(browser, "ghost9", "wrong").status_code == 200
    assert_refused(admin_login(browser, "staff", RIGHT))


def test_a_spoofed_forwarded_for_does_not_escape_the_admin_address_limit(staff, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 3
    browser = Client()
    for n in range(3):
        response = admin_login(browser, f"ghost{n}", "wrong", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}")
        assert response.status_code == 200
    assert_refused(admin_login(browser, "staff", RIGHT, HTTP_X_FORWARDED_FOR="10.9.9.9"))


def test_the_admin_address_is_read_through_the_trusted_proxies(staff, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 2
    settings.TRUSTED_PROXY_COUNT = 1
    browser = Client()
    for n in range(2):
        forwarded = f"10.0.0.{n}, 198.51.100.7"
        response = admin_login(browser, f"ghost{n}", "wrong", HTTP_X_FORWARDED_FOR=forwarded)
        assert response.status_code == 200
    refused = admin_login(browser, "staff", RIGHT, HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7")
    assert_refused(refused)
    # Another client behind the same proxy logs in.
    assert (
        admin_login(browser, "staff", RIGHT, HTTP_X_FORWARDED_FOR="198.51.100.8").status_code == 302
    )


def test_an_admin_login_forgets_the_failures_before_it(staff, make_api, settings):
    limit = settings.LOGIN_FAILURES_PER_USER
    browser = Client()
    for _ in range(limit - 1):
        assert admin_login(browser, "staff", "wrong").status_code == 200
    assert admin_login(browser, "staff", RIGHT).status_code == 302
    assert logged_in(browser)
    # The failures before the success are forgotten, on both doors.
    for _ in range(limit - 1):
        assert api_login(make_api, "staff", "wrong").status_code == 401
    assert api_login(make_api, "staff", RIGHT).status_code == 200


def test_a_right_password_of_a_user_who_is_not_staff_is_a_failure(manager, settings):
    """The admin refuses a non-staff user with the invalid-login message: no success, counted."""
    browser = Client()
    for _ in range(settings.LOGIN_FAILURES_PER_USER):
        assert admin_login(browser, "manager", RIGHT).status_code == 200
    assert_refused(admin_login(browser, "manager", RIGHT))
