"""Streaming uploads with a hard size limit: the body is never held whole in memory.

A declared Content-Length too large for a 25 MiB file is refused before a byte is read. A body
without one (chunked) is spooled to a temporary file up to the limit and refused past it. While
Django's multipart parser streams the parts to a temporary file, LimitedUploadHandler counts
and hashes the file's bytes, and stops the upload as soon as the file passes the limit.
"""

from __future__ import annotations

import hashlib
import tempfile

from django.core.files.uploadhandler import FileUploadHandler, TemporaryFileUploadHandler
from django.core.handlers.wsgi import LimitedStream

from apps.core.camel_case import snake
from apps.core.exceptions import PayloadTooLarge

MAX_FILE_BYTES = 26_214_400  # 25 MiB: accepted; one byte more is not
FORM_OVERHEAD = 64 * 1024  # multipart boundaries, headers and the small text fields
CHUNK = 64 * 1024


class FileTooLarge(PayloadTooLarge):
    default_detail = f"The file is larger than {MAX_FILE_BYTES} bytes (25 MiB)."


class LimitedUploadHandler(FileUploadHandler):
    """Counts and hashes each file part as it streams past; refuses one over the limit."""

    def __init__(self, request=None, limit: int = MAX_FILE_BYTES):
        super().__init__(request)
        self.limit = limit
        self.digests: dict[str, str] = {}
        self._hash = None
        self._size = 0

    def new_file(self, field_name, *args, **kwargs):
        super().new_file(field_name, *args, **kwargs)
        self._hash, self._size = hashlib.sha256(), 0

    def receive_data_chunk(self, raw_data, start):
        self._size += len(raw_data)
        if self._size > self.limit:
            raise FileTooLarge()
        self._hash.update(raw_data)
        return raw_data

    def file_complete(self, file_size):
        # Under the name the parser gives the part (`FILE` is read as `file`).
        self.digests[snake(self.field_name)] = self._hash.hexdigest()
        return None


def prepare_upload(request, limit: int = MAX_FILE_BYTES) -> LimitedUploadHandler:
    """Check the declared size, spool a chunked body, and install the streaming handlers.

    `request` is the Django HttpRequest; call before anything reads the body.
    """
    meta = request.META
    declared = meta.get("CONTENT_LENGTH")
    if declared:
        try:
            length = int(declared)
        except ValueError:
            length = 0
        if length > limit + FORM_OVERHEAD:
            raise FileTooLarge()
    elif "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower() and "wsgi.input" in meta:
        # Lives as long as the request's stream; closed with it when the request ends.
        spool = tempfile.SpooledTemporaryFile(max_size=1024 * 1024)  # noqa: SIM115
        total, source = 0, meta["wsgi.input"]
        while chunk := source.read(CHUNK):
            total += len(chunk)
            if total > limit + FORM_OVERHEAD:
                spool.close()
                raise FileTooLarge()
            spool.write(chunk)
        spool.seek(0)
        meta["CONTENT_LENGTH"] = str(total)
        request._stream = LimitedStream(spool, total)
    handler = LimitedUploadHandler(request, limit)
    request.upload_handlers = [handler, TemporaryFileUploadHandler(request)]
    return handler
