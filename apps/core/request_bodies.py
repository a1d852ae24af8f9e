"""Request bodies under /v1 are read whether or not they announce a Content-Length.

gunicorn de-chunks a body sent with `Transfer-Encoding: chunked` into `wsgi.input` and passes no
CONTENT_LENGTH, and Django reads a request without one as empty: a chunked PUT answered 200
having changed nothing, a chunked POST 400 "field required". ChunkedBodyMiddleware, before
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
"""

from __future__ import annotations

import tempfile

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest, HttpResponse
from gunicorn.http.errors import NoMoreData, ParseException

from apps.core.middleware import is_api_path
from apps.core.problems import problem_response

MAX_FILE_BYTES = 26_214_400  # an uploaded file of 25 MiB is accepted; one byte more is not
FORM_OVERHEAD = 64 * 1024  # multipart boundaries, headers and the small text fields
MAX_MULTIPART_BYTES = MAX_FILE_BYTES + FORM_OVERHEAD
CHUNK = 64 * 1024
IN_MEMORY_BYTES = 1024 * 1024


def body_limit(content_type: str) -> int | None:
    """The most bytes a body of this content type may have under /v1 (None: no limit)."""
    if content_type.lower().startswith("multipart/form-data"):
        return MAX_MULTIPART_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


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


def spool_body(request: HttpRequest) -> None:
    """Read the chunked body of `request` (up to one byte past its limit) and give the request
    that body and its length, as if it had been sent with a Content-Length."""
    meta = request.META
    limit = body_limit(meta.get("CONTENT_TYPE", ""))
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


class ChunkedBodyMiddleware:
    """Under /v1, a body sent chunked (no Content-Length) is read as if it had one."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_api_path(request.path) and sent_without_length(request.META):
            try:
                spool_body(request)
            except (ParseException, NoMoreData):
                # A broken chunked encoding, or a client gone before the last chunk.
                return problem_response(400, "The request body's chunked encoding is broken.")
        return self.get_response(request)
