"""Guarantees problem+json for every error under /v1, even those raised outside DRF views."""

from __future__ import annotations

import logging
import time

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.contrib.auth import middleware as auth
from django.contrib.auth.models import AnonymousUser
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse

from apps.core import request_id
from apps.core.problems import PROBLEM_CONTENT_TYPE, problem_response, suspicious_request

logger = logging.getLogger(__name__)

API_PREFIX = "/v1/"
# Signed download links are API answers too: problem+json errors, never cached.
DOWNLOAD_PREFIX = "/downloads/"
API_PREFIXES = (API_PREFIX, DOWNLOAD_PREFIX)
# The roots themselves, without their slash (`/v1`, `/v1?x=1`): under the API too, so their
# 404 is problem+json like any unknown route's (contract section 5), not Django's HTML page.
_API_ROOTS = frozenset(prefix.rstrip("/") for prefix in API_PREFIXES)


def is_api_path(path: str) -> bool:
    """Whether `path` (without its query) is under /v1 or the signed download links."""
    return path.startswith(API_PREFIXES) or path in _API_ROOTS


_DETAILS = {
    400: "The request is malformed.",
    403: "You do not have permission to perform this action.",
    404: "No resource exists at this address.",
    405: "The method is not allowed on this resource.",
    413: "The request body is larger than allowed.",
    500: "The server failed to handle the request.",
}


access_logger = logging.getLogger("apps.access")


class RequestIdMiddleware:
    """Binds the request id for the request's log lines, echoes it, and logs one access line.

    The access line (method, path, route, status, duration) is written here rather than by
    gunicorn so it carries the same request id as everything the request logged.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        rid = request_id.request_id_from(request.headers.get(request_id.HEADER))
        request.request_id = rid
        token = request_id.bind(rid)
        started = time.monotonic()
        try:
            response = self.get_response(request)
            response[request_id.HEADER] = rid
            match = getattr(request, "resolver_match", None)
            access_logger.info(
                "%s %s %s",
                request.method,
                request.path,
                response.status_code,
                extra={
                    "method": request.method,
                    "path": request.path,
                    "route": match.route if match else None,
                    "status": response.status_code,
                    "duration_ms": round((time.monotonic() - started) * 1000, 1),
                    "remote_addr": request.META.get("REMOTE_ADDR"),
                },
            )
            return response
        finally:
            request_id.unbind(token)


def rate_limit_headers(response: HttpResponse, allowance) -> None:
    """The caller's rate limit on every answer it was counted for, a 429 included (the
    `RateLimit-*` fields of the IETF httpapi draft, as gateways send them): the limit the caller
    is closest to, of its API key's and its user's (`RateLimit-Policy`: `<requests>;w=<seconds>`),
    the requests left in it, and the seconds until one more is allowed (its oldest counted
    request leaves the window; on a 429, `Retry-After`). Set by
    apps.accounts.rate_limits.CallerRateThrottle."""
    response["RateLimit-Limit"] = str(allowance.limit)
    response["RateLimit-Remaining"] = str(allowance.remaining)
    response["RateLimit-Reset"] = str(allowance.reset)
    response["RateLimit-Policy"] = f"{allowance.limit};w={allowance.period}"


class ProblemDetailsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self._answer(request)
        allowance = getattr(request, "rate_limit", None)
        # A 429 the rate limit did not give (failed logins held back) has its own Retry-After:
        # the rate limit's headers beside it would tell the caller to come back sooner.
        if allowance is not None and (allowance.wait or response.status_code != 429):
            rate_limit_headers(response, allowance)
        return response

    def _answer(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        api = is_api_path(request.path)
        if api and not response.has_header("Cache-Control"):
            # Coverage answers change with every policy write and carry customers' data;
            # no browser, proxy or CDN may keep them.
            response["Cache-Control"] = "no-store"
        if (
            api
            and response.status_code >= 400
            and not response.get("Content-Type", "").startswith(
                (PROBLEM_CONTENT_TYPE, "application/json")
            )
            and not getattr(response, "streaming", False)
        ):
            status = response.status_code
            replaced = problem_response(
                status, _DETAILS.get(status, "The request could not be handled.")
            )
            for header in ("Allow", "Retry-After", "WWW-Authenticate"):
                if response.has_header(header):
                    replaced[header] = response[header]
            replaced["Cache-Control"] = "no-store"
            return replaced
        return response

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not is_api_path(request.path):
            return None
        if isinstance(exception, RequestDataTooBig):
            return problem_response(413, _DETAILS[413])
        if isinstance(exception, SuspiciousOperation):  # Django's 400, with its reason
            return problem_response(400, suspicious_request(exception))
        logger.exception("Unhandled error on %s", request.path, exc_info=exception)
        return problem_response(500, _DETAILS[500])


# Routes under /v1 that are pages for a browser, not API calls: they keep the whole stack.
_BROWSER_PAGES = frozenset({"/v1/docs", "/v1/schema"})


def cookieless_api_call(request: HttpRequest) -> bool:
    """A /v1 API call that carries no cookie: sessions, messages and the session user can do
    nothing for it (every /v1 API view is a DRF view authenticated by the apiKey header and
    the bearer token alone), so their middlewares skip their work.

    Without a cookie there is no session to load and no message to carry, so the answer is
    byte for byte the one the full stack gives. Any cookie (a browser logged in to the
    admin, say) takes the full stack. Django's CSRF middleware stays as it is (the deploy
    check asks for it by name; it returns at once for DRF's CSRF-exempt views).
    """
    found = getattr(request, "_cookieless_api_call", None)
    if found is None:
        path = request.path_info
        found = (
            not request.META.get("HTTP_COOKIE")
            and path.startswith(API_PREFIX)
            and path not in _BROWSER_PAGES
        )
        request._cookieless_api_call = found
    return found


class SessionMiddleware(sessions.SessionMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        if not cookieless_api_call(request):
            super().process_request(request)

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if cookieless_api_call(request):
            return response
        return super().process_response(request, response)


class AuthenticationMiddleware(auth.AuthenticationMiddleware):
    """Without a session, the session user is the anonymous one; DRF's authentication
    replaces it with the caller (rest_framework.request.Request.user's setter)."""

    def process_request(self, request: HttpRequest) -> None:
        if cookieless_api_call(request):
            request.user = AnonymousUser()
        else:
            super().process_request(request)


class MessageMiddleware(messages.MessageMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        if not cookieless_api_call(request):
            super().process_request(request)


# What a view may set on its response to alter its policy (django-csp's decorators).
_CSP_RESPONSE_PARTS = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_exempt",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
    "_csp_exempt_ro",
)


class PrecomputedCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, with the settings' policy built once instead of per response.

    django-csp builds both headers from the settings on every response (a tenth of a /v1/me
    answer's CPU, issue 18). A response whose view set no policy of its own and whose request
    used no nonce gets the same header values from a memo keyed by the settings' two policy
    objects (so override_settings is honoured); anything else goes through django-csp itself.
    """

    _memo: tuple[object, object, str, str] | None = None

    @classmethod
    def _policies(cls) -> tuple[str, str]:
        config = getattr(settings, "CONTENT_SECURITY_POLICY", None)
        config_ro = getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None)
        memo = cls._memo
        if memo is None or memo[0] is not config or memo[1] is not config_ro:
            memo = (config, config_ro, build_policy(), build_policy(report_only=True))
            cls._memo = memo
        return memo[2], memo[3]

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if getattr(request, "_csp_nonce", None) is not None or any(
            hasattr(response, name) for name in _CSP_RESPONSE_PARTS
        ):
            return super().process_response(request, response)
        if response.status_code in (500, 404) and settings.DEBUG:
            return response
        csp, csp_ro = self._policies()
        for header, value, setting in (
            (HEADER, csp, "CONTENT_SECURITY_POLICY"),
            (HEADER_REPORT_ONLY, csp_ro, "CONTENT_SECURITY_POLICY_REPORT_ONLY"),
        ):
            if value and header not in response:
                prefixes = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES")
                if not prefixes or not request.path_info.startswith(tuple(prefixes)):
                    response[header] = value
        # As django-csp does: a nonce asked for after the header was written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response


class QueryCountMiddleware:
    """Adds X-Query-Count to every response (benchmarks only: QUERY_COUNT_HEADER=1)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.db import connection

        count = 0

        def counter(execute, sql, params, many, context):
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counter):
            response = self.get_response(request)
        response["X-Query-Count"] = str(count)
        return response
