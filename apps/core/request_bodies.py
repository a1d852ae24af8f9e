"""Request bodies under /v1 are judged before anything reads them, and read whether or not they
announce a Content-Length.

A body sent with a Content-Encoding other than identity (gzip, br, ...) is a 415 naming it, on
every route that takes a body, before a byte of it is read (RFC 9110 section 15.5.16): the
service decodes no content coding, and read as if it were not encoded a gzip body answered a
"JSON parse error" and a mislabelled plain one was stored.

gunicorn de-chunks a body sent with `Transfer-Encoding: chunked` into `wsgi.input` and passes no
CONTENT_LENGTH, and Django reads a request without one as empty: a chunked PUT answered 200
having changed nothing, a chunked POST 400 "field required". RequestBodyMiddleware, before
anything reads the body, spools such a body to a temporary file (in memory up to 1 MiB, on disk
past it) and gives the request its length, so everything after it (DRF's parsers, Django's size
check, the document uploads) sees the request it would have seen with a Content-Length.

A body is read at most one byte past the limit its kind has with a Content-Length: a multipart
form (a document upload), the 25 MiB file and the room of its form; any other body, Django's
DATA_UPLOAD_MAX_MEMORY_SIZE. Past it, the rest is left unread and the request declares the
length read, one byte past the limit: the check that refuses a Content-Length past the limit
refuses it the same way, at the same step (413 problem+json after authentication and
permissions, as for a declared length), and reading the body raises 413 rather than hand over
a truncated one.

Nothing is judged or read for a request that would not read it: a route that does not resolve
or does not offer the method, or a caller the gate (`CHUNKED_BODY_GATE`, the API key's check)
refuses; those go on with an empty body to the answer they get anyway (404, 405, 401), so no
body is read or stored for a caller without credentials. The 25 MiB of an upload apply only
where a route takes a multipart form; any other route's body has Django's
DATA_UPLOAD_MAX_MEMORY_SIZE.
"""

from __future__ import annotations

import tempfile

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


def body_limit(content_type: str, *, takes_forms: bool = True) -> int | None:
    """The most bytes a body of this content type may have under /v1 (None: no limit): an
    upload's form where the route takes one, else Django's DATA_UPLOAD_MAX_MEMORY_SIZE."""
    if takes_forms and content_type.lower().startswith("multipart/form-data"):
        return MAX_MULTIPART_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def route_reading(request: HttpRequest) -> tuple[bool, bool]:
    """Whether the request's route would read its body (it resolves and offers the method),
    and whether it takes a multipart form (an upload)."""
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return False, False
    view = getattr(match.func, "cls", None)  # DRF's views and viewsets
    if view is None:
        return False, False
    method = request.method.lower()
    actions = getattr(match.func, "actions", None)  # a viewset: its method -> action map
    offers = method in actions if actions is not None else hasattr(view, method)
    takes_forms = any(issubclass(parser, MultiPartParser) for parser in view.parser_classes)
    return offers, takes_forms


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
    """Under /v1, a body in a content coding is a 415; a body sent chunked (no Content-Length)
    is read as if it had one."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.gate = import_string(settings.CHUNKED_BODY_GATE)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_api_path(request.path):
            return self.get_response(request)
        meta = request.META
        chunked = sent_without_length(meta)
        codings = content_codings(meta) if request.method in BODY_METHODS else []
        if not (chunked or (codings and has_body(meta))):
            return self.get_response(request)
        offers, takes_forms = route_reading(request)
        if not (offers and self.gate(request)):
            return self.get_response(request)  # its 404, 405 or 401 reads no body
        if codings:
            return coding_refused(codings)
        try:
            spool_body(request, takes_forms=takes_forms)
        except (ParseException, NoMoreData):
            # A broken chunked encoding, or a client gone before the last chunk.
            return problem_response(400, "The request body's chunked encoding is broken.")
        return self.get_response(request)
