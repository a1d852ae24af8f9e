"""Guarantees problem+json for every error under /v1, even those raised outside DRF views."""

from __future__ import annotations

import logging
import time

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse

from apps.core import request_id
from apps.core.problems import PROBLEM_CONTENT_TYPE, problem_response

logger = logging.getLogger(__name__)

API_PREFIX = "/v1/"
# Signed download links are API answers too: problem+json errors, never cached.
DOWNLOAD_PREFIX = "/downloads/"
API_PREFIXES = (API_PREFIX, DOWNLOAD_PREFIX)
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


class ProblemDetailsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith(API_PREFIXES) and not response.has_header("Cache-Control"):
            # Coverage answers change with every policy write and carry customers' data;
            # no browser, proxy or CDN may keep them.
            response["Cache-Control"] = "no-store"
        if (
            request.path.startswith(API_PREFIXES)
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
        if not request.path.startswith(API_PREFIXES):
            return None
        if isinstance(exception, RequestDataTooBig):
            return problem_response(413, _DETAILS[413])
        logger.exception("Unhandled error on %s", request.path, exc_info=exception)
        return problem_response(500, _DETAILS[500])


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
