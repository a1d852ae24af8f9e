"""Request bodies under /v1 are judged before anything reads them, and read whether or not they
announce a Content-Length.

On every route, for an operation that takes a body (POST, PUT, PATCH), before the view acts:

- a body with a Content-Encoding other than identity (gzip, br, ...) is a 415 naming it, before
  a byte of it is read (RFC 9110 section 15.5.16): the service decodes no content coding, and
  read as if it were not encoded a gzip body answered a "JSON parse error" and a mislabelled
  plain one was stored;
- a body past its route's limit (below) is a 413, whether the view would read it or not: the
  limit was Django's, checked only where a view read the body, so a 3 MB body to
  `POST /v1/webhooks/{id}/ping` answered 202 and queued a ping;
- a body sent to an operation that takes none (`takes_body = False`: ping, rotate-secret,
  redeliver, which the OpenAPI document shows without a request body) is a 415 unless it is
  empty or JSON, which is ignored as it always was.

gunicorn de-chunks a body sent with `Transfer-Encoding: chunked` into `wsgi.input` and passes no
CONTENT_LENGTH, and Django reads a request without one as empty: a chunked PUT answered 200
having changed nothing, a chunked POST 400 "field required". RequestBodyMiddleware, before
anything reads the body, spools such a body to a temporary file (in memory up to 1 MiB, on disk
past it) and gives the request its length, so everything after it (DRF's parsers, Django's size
check, the document uploads) sees the request it would have seen with a Content-Length.

A body is read at most one byte past the limit its kind has with a Content-Length: a multipart
form (a document upload), the 25 MiB file and the room of its form; any other body, Django's
DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB). Past it, the rest is left unread and the request declares
the length read, one byte past the limit: the check that refuses a Content-Length past the limit
refuses it the same way, at the same step (413 problem+json once the API key is checked, before
the bearer token and permissions, for a declared length as for a chunked one), and reading the
body raises 413 rather than hand over a truncated one.

Nothing is judged or read for a request that would not read it: a route that does not resolve
or does not offer the method, or a caller the gate (`REQUEST_BODY_GATE`, the API key's check)
refuses; those go on with an empty body to the answer they get anyway (404, 405, 401), so no
body is read or stored for a caller without credentials. The 25 MiB of an upload apply only
where a route takes a multipart form; any other route's body has Django's
DATA_UPLOAD_MAX_MEMORY_SIZE.
"""

from __future__ import annotations

import tempfile
from typing import NamedTuple

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils.module_loading import import_string
from gunicorn.http.errors import NoMoreData, ParseException
from rest_framework.parsers import MultiPartParser

from apps.core.middleware import is_api_path
from apps.core.problems import problem_response

MAX_FILE_BYTES = 26_214_400  # an uploaded file of 25 MiB is accepted; one byte more is not
FORM_OVERHEAD = 64 * 1024  # multipart boundaries, headers and the small text fields
MAX_MULTIPART_BYTES = MAX_FILE_BYTES + FORM_OVERHEAD
CHUNK = 64 * 1024
IN_MEMORY_BYTES = 1024 * 1024
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})  # the operations that take a body


def content_codings(meta: dict) -> list[str]:
    """The content codings a request's body is sent in (`Content-Encoding: gzip, br`), lower
    case, `identity` (no coding) left out."""
    header = meta.get("HTTP_CONTENT_ENCODING", "")
    codings = (coding.strip().lower() for coding in header.split(","))
    return [coding for coding in codings if coding and coding != "identity"]


def has_body(meta: dict) -> bool:
    """Whether the request carries a body: a Content-Length past 0, or one sent chunked."""
    length = meta.get("CONTENT_LENGTH") or ""
    return (length.strip() not in ("", "0")) or sent_without_length(meta)


def coding_refused(codings: list[str]):
    """The 415 of a body in a content coding the service does not decode."""
    named = ", ".join(codings)
    return problem_response(
        415,
        f"The request body's Content-Encoding '{named}' is not supported: "
        "send the body unencoded (identity).",
    )


def is_json(content_type: str) -> bool:
    """Whether a Content-Type is JSON's (any parameters), the one type a body may have where
    the operation takes none."""
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def too_large(limit: int):
    """The 413 of a body past its route's limit, saying the limit."""
    return problem_response(
        413, f"The request body is larger than allowed: at most {limit} bytes here."
    )


def body_limit(content_type: str, *, takes_forms: bool = True) -> int | None:
    """The most bytes a body of this content type may have under /v1 (None: no limit): an
    upload's form where the route takes one, else Django's DATA_UPLOAD_MAX_MEMORY_SIZE."""
    if takes_forms and content_type.lower().startswith("multipart/form-data"):
        return MAX_MULTIPART_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


class Route(NamedTuple):
    """What a request's route does with a body."""

    offers: bool  # it resolves and offers the method: it would read the body
    takes_forms: bool  # it takes a multipart form (an upload)
    takes_body: bool  # the operation takes a body at all (`takes_body`, default True)


_NO_ROUTE = Route(offers=False, takes_forms=False, takes_body=False)


def route_reading(request: HttpRequest) -> Route:
    """What the request's route does with a body: whether it offers the method, takes a
    multipart form, and (an action saying `takes_body=False`) takes a body at all."""
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return _NO_ROUTE
    view = getattr(match.func, "cls", None)  # DRF's views and viewsets
    if view is None:
        return _NO_ROUTE
    method = request.method.lower()
    actions = getattr(match.func, "actions", None)  # a viewset: its method -> action map
    offers = method in actions if actions is not None else hasattr(view, method)
    takes_forms = any(issubclass(parser, MultiPartParser) for parser in view.parser_classes)
    initkwargs = getattr(match.func, "initkwargs", {})  # a viewset action's own attributes
    takes_body = initkwargs.get("takes_body", getattr(view, "takes_body", True))
    return Route(offers=offers, takes_forms=takes_forms, takes_body=takes_body)


def sent_without_length(meta: dict) -> bool:
    """A body sent chunked, which the server passes on without a CONTENT_LENGTH."""
    return (
        not meta.get("CONTENT_LENGTH")
        and "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower()
        and "wsgi.input" in meta
    )


class _TooLarge:
    """The body of a request past its limit: reading it is a 413, never a truncated body."""

    def read(self, *args, **kwargs):
        raise RequestDataTooBig("The request body is larger than allowed.")

    readline = read

    def close(self):
        pass


def spool_body(request: HttpRequest, *, takes_forms: bool = True) -> None:
    """Read the chunked body of `request` (up to one byte past its limit) and give the request
    that body and its length, as if it had been sent with a Content-Length."""
    meta = request.META
    limit = body_limit(meta.get("CONTENT_TYPE", ""), takes_forms=takes_forms)
    stop = None if limit is None else limit + 1
    source = meta["wsgi.input"]
    # Lives as long as the request's stream; closed with it when the request ends.
    spool = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY_BYTES)  # noqa: SIM115
    total = 0
    while stop is None or total < stop:
        chunk = source.read(CHUNK if stop is None else min(CHUNK, stop - total))
        if not chunk:
            break
        spool.write(chunk)
        total += len(chunk)
    meta["CONTENT_LENGTH"] = str(total)
    if stop is not None and total >= stop:
        spool.close()
        request._stream = _TooLarge()
        return
    spool.seek(0)
    request._stream = LimitedStream(spool, total)


class RequestBodyMiddleware:
    """Under /v1, a body is judged before the view acts (its content coding, its size, whether
    the operation takes one), and a body sent chunked (no Content-Length) is read as if it had
    one."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.gate = import_string(settings.REQUEST_BODY_GATE)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_api_path(request.path):
            return self.get_response(request)
        meta = request.META
        chunked = sent_without_length(meta)
        judged = request.method in BODY_METHODS and has_body(meta)
        if not (chunked or judged):
            return self.get_response(request)
        content_type = meta.get("CONTENT_TYPE", "")
        codings = content_codings(meta) if judged else []
        if not (chunked or codings or _may_refuse(meta, content_type)):
            return self.get_response(request)  # the common body: nothing to look up
        route = route_reading(request)
        if not route.offers:
            return self.get_response(request)  # its 404 or 405 reads no body
        if chunked:
            if not self.gate(request):
                return self.get_response(request)  # its 401: nothing read for it
            if codings:
                return coding_refused(codings)
            try:
                spool_body(request, takes_forms=route.takes_forms)
            except (ParseException, NoMoreData):
                # A broken chunked encoding, or a client gone before the last chunk.
                return problem_response(400, "The request body's chunked encoding is broken.")
        refusal = _refusal(meta, route, content_type, codings) if judged else None
        # A caller without a valid API key gets its 401, whatever its body; the key is looked
        # up only for a body refused (a chunked one's was, before it was read).
        if refusal is None or not (chunked or self.gate(request)):
            return self.get_response(request)
        return refusal


def _refusal(meta: dict, route: Route, content_type: str, codings: list[str]):
    """The answer refusing a body the route offers to take, or None: its content coding, then
    its size, then (an operation that takes no body) its type."""
    if codings:
        return coding_refused(codings)
    length = _length(meta)
    limit = body_limit(content_type, takes_forms=route.takes_forms)
    if limit is not None and length > limit:
        return too_large(limit)
    if not route.takes_body and length and not is_json(content_type):
        given = content_type.split(";", 1)[0].strip() or "a body without a Content-Type"
        return problem_response(
            415,
            "This operation takes no request body: send none (or JSON, which it ignores), "
            f"not {given}.",
        )
    return None


def _length(meta: dict) -> int:
    try:
        return int(meta.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _may_refuse(meta: dict, content_type: str) -> bool:
    """Whether a body sent with a Content-Length may be refused for its size or its type: past
    the smallest limit, or of a type other than JSON (an upload's form; a route that takes no
    body refuses it). Otherwise the route is not even looked up."""
    smallest = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return (smallest is not None and _length(meta) > smallest) or not is_json(content_type)
