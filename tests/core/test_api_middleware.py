"""Issue 18: the middlewares a cookieless /v1 call skips, and the CSP header built once.

The answers must be those of the full stack: the same Content-Security-Policy value as
django-csp builds, no cookie set, no Vary: Cookie; a request that carries a cookie still gets
what sessions and CSRF do for it.
"""

from __future__ import annotations

import pytest
from csp.constants import HEADER, NONCE
from csp.decorators import csp_exempt, csp_update
from csp.utils import build_policy
from django.http import HttpResponse
from django.test import RequestFactory

from apps.core.middleware import PrecomputedCSPMiddleware, cookieless_api_call

pytestmark = pytest.mark.django_db


def test_a_v1_answer_carries_the_policy_django_csp_builds(api):
    response = api.get("/v1/me")
    assert response.status_code == 200
    assert response[HEADER] == build_policy()
    assert "Set-Cookie" not in response
    assert not response.has_header("Vary")
    assert response["X-Frame-Options"] == "DENY"


def test_an_unauthenticated_v1_answer_carries_it_too(client):
    response = client.get("/v1/me")
    assert response.status_code == 401
    assert response[HEADER] == build_policy()
    assert "Set-Cookie" not in response


def test_a_v1_call_with_a_broken_csrf_cookie_still_gets_a_new_one(api):
    # The full stack: CSRF middleware replaces a malformed cookie, as it did before.
    api.cookies["csrftoken"] = "not-a-token"
    response = api.get("/v1/me")
    assert response.status_code == 200
    assert "csrftoken" in response.cookies
    assert response.cookies["csrftoken"].value != "not-a-token"


def test_a_v1_call_with_a_stale_session_cookie_has_it_removed(api):
    api.cookies["sessionid"] = "x"  # too short to be a session key: the stack deletes it
    response = api.get("/v1/me")
    assert response.status_code == 200
    assert response.cookies["sessionid"].value == ""


def test_logged_in_admin_pages_keep_sessions_and_messages(staff_client):
    response = staff_client.get("/admin/")
    assert response.status_code == 200
    assert "Cookie" in response["Vary"]


def test_which_requests_skip_the_session_stack():
    factory = RequestFactory()
    assert cookieless_api_call(factory.get("/v1/me"))
    assert not cookieless_api_call(factory.get("/v1/me", HTTP_COOKIE="sessionid=abc"))
    assert not cookieless_api_call(factory.get("/v1/docs"))
    assert not cookieless_api_call(factory.get("/v1/schema"))
    assert not cookieless_api_call(factory.get("/admin/"))
    assert not cookieless_api_call(factory.get("/downloads/abc"))


def _through_csp(view, path="/anything"):
    request = RequestFactory().get(path)
    middleware = PrecomputedCSPMiddleware(view)
    return request, middleware(request)


def test_a_views_own_policy_is_still_honoured():
    _, exempt = _through_csp(csp_exempt()(lambda request: HttpResponse("x")))
    assert HEADER not in exempt
    _, updated = _through_csp(
        csp_update({"img-src": ["https://example.com"]})(lambda request: HttpResponse("x"))
    )
    assert "https://example.com" in updated[HEADER]


def test_a_nonce_used_by_the_page_is_in_the_header(settings):
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": ["'self'", NONCE]}}

    def view(request):
        return HttpResponse(str(request.csp_nonce))

    _, response = _through_csp(view)
    nonce = response.content.decode()
    assert f"script-src 'self' 'nonce-{nonce}'" in response[HEADER]
    assert response[HEADER] == build_policy(nonce=nonce)
    _, plain = _through_csp(lambda request: HttpResponse("x"))
    assert "nonce" not in plain[HEADER]
    assert plain[HEADER] == build_policy()


def test_the_policy_follows_the_settings(settings):
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {
        "DIRECTIVES": {"default-src": ["'self'"]},
        "EXCLUDE_URL_PREFIXES": ["/skip"],
    }
    _, response = _through_csp(lambda request: HttpResponse("x"))
    assert response[HEADER] == build_policy() == "default-src 'none'"
    assert response["Content-Security-Policy-Report-Only"] == "default-src 'self'"
    _, skipped = _through_csp(lambda request: HttpResponse("x"), path="/skip/this")
    assert "Content-Security-Policy-Report-Only" not in skipped
