"""Streaming uploads with a hard size limit: the body is never held whole in memory.

A declared Content-Length too large for a 25 MiB file is refused before a byte is read. A body
sent without one (chunked) was spooled before the view, as every /v1 body is, up to one byte
past the same limit, and declares the length read (apps.core.request_bodies): the same check
refuses it. While Django's multipart parser streams the parts to a temporary file,
LimitedUploadHandler counts and hashes the file's bytes, and stops the upload as soon as the
file passes the limit.
"""

from __future__ import annotations

import hashlib

from django.core.files.uploadhandler import FileUploadHandler, TemporaryFileUploadHandler

from apps.core.camel_case import snake
from apps.core.exceptions import PayloadTooLarge
from apps.core.request_bodies import FORM_OVERHEAD, MAX_FILE_BYTES


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
    """Check the declared size (a chunked body's is the length spooled) and install the
    streaming handlers.

    `request` is the Django HttpRequest; call before anything reads the body.
    """
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > limit + FORM_OVERHEAD:
        raise FileTooLarge()
    handler = LimitedUploadHandler(request, limit)
    request.upload_handlers = [handler, TemporaryFileUploadHandler(request)]
    return handler
