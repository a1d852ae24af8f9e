"""Streaming uploads with a hard size limit: the body is never held whole in memory.

A declared Content-Length too large for a 25 MiB file is refused before a byte is read. A body
sent without one (chunked) was spooled before the view, as every /v1 body is, up to one byte
past the same limit, and declares the length read (apps.core.request_bodies): the same check
refuses it. While Django's multipart parser streams the parts to a temporary file,
LimitedUploadHandler counts and hashes the file's bytes, and stops the upload as soon as the
file passes the limit.
"""

from __future__ import annotations

import codecs
import hashlib
import re

from django.core.files.uploadhandler import FileUploadHandler, TemporaryFileUploadHandler
from django.http import QueryDict
from django.http.multipartparser import MultiPartParser, MultiPartParserError
from django.utils.datastructures import MultiValueDict
from djangorestframework_camel_case.parser import CamelCaseMultiPartParser
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import DataAndFiles

from apps.core.camel_case import snake
from apps.core.exceptions import PayloadTooLarge
from apps.core.request_bodies import CHUNK, FORM_OVERHEAD, MAX_FILE_BYTES
from apps.documents.storage import FALLBACK_FILE_NAME


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


# --- the form's parts: a file part is kept whatever its name ------------------------------

# A part's header block longer than this is not rewritten (Django refuses headers past 8 KiB).
MAX_PART_HEADER_BYTES = 64 * 1024
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def _readable_header(block: bytes) -> bytes:
    """A part's header block with each byte that is not UTF-8 made "?", the length kept.

    Django decodes each header line as strict UTF-8 and skips a line that is not, so a file
    name sent in another encoding (b"\\xff\\xfe.txt") lost the whole Content-Disposition
    and its part was dropped ("file: No file was submitted."). "?" is a character a file name
    may not hold: `clean_file_name` removes it, as it removes any such character.
    """
    try:
        block.decode()
    except UnicodeDecodeError:
        text = block.decode("utf-8", "surrogateescape")
        return _NOT_UTF8.sub("?", text).encode()
    return block


class _ReadablePartHeaders:
    """The multipart body as sent, read through `_readable_header` in each part's header
    block (from a boundary to the blank line that ends the part's headers); every byte of the
    parts' contents passes untouched, streamed as it comes."""

    def __init__(self, stream, boundary: bytes):
        self._stream = stream
        self._first = b"--" + boundary
        self._delimiter = b"\r\n--" + boundary  # a part's content never holds it
        self._buffer = b""
        self._ready = bytearray()
        self._in_headers = False
        self._started = False
        self._done = False

    def read(self, size: int | None = -1) -> bytes:
        while not self._done and (size is None or size < 0 or len(self._ready) < size):
            chunk = self._stream.read(CHUNK)
            if not chunk:
                self._done = True
            self._buffer += chunk
            self._advance()
        if size is None or size < 0:
            size = len(self._ready)
        given = bytes(self._ready[:size])
        del self._ready[:size]
        return given

    def _give(self, upto: int, data: bytes | None = None) -> None:
        self._ready += self._buffer[:upto] if data is None else data
        self._buffer = self._buffer[upto:]

    def _advance(self) -> None:
        while True:
            if not self._started:  # the first boundary starts the body, without a CRLF
                if len(self._buffer) < len(self._first) and not self._done:
                    return
                self._started = True
                if self._buffer.startswith(self._first):
                    self._give(len(self._first))
                    self._in_headers = True
            elif self._in_headers:
                end = self._buffer.find(b"\r\n\r\n")
                if end == -1 and len(self._buffer) <= MAX_PART_HEADER_BYTES and not self._done:
                    return
                if end == -1:  # no header block: the closing boundary's epilogue, or junk
                    self._give(len(self._buffer))
                else:
                    self._give(end, _readable_header(self._buffer[:end]))
                self._in_headers = False
            else:
                found = self._buffer.find(self._delimiter)
                if found == -1:
                    # Keep what could be the start of a delimiter cut by the chunk's end.
                    keep = 0 if self._done else len(self._delimiter) - 1
                    self._give(max(len(self._buffer) - keep, 0))
                    return
                self._give(found + len(self._delimiter))
                self._in_headers = True


class NamedFilePartParser(MultiPartParser):
    """Django's multipart parser, keeping a file part whatever its name: one that Django's
    sanitising leaves empty ("..", ".", "/") is named `FALLBACK_FILE_NAME`, and one not sent in
    UTF-8 is read (`_readable_header`). Directories are still dropped (Django's sanitising
    runs first, and `clean_file_name` after it)."""

    def __init__(self, META, input_data, upload_handlers, encoding=None):
        super().__init__(META, input_data, upload_handlers, encoding)
        self._input_data = _ReadablePartHeaders(self._input_data, self._boundary)

    def sanitize_file_name(self, file_name):
        return super().sanitize_file_name(file_name) or FALLBACK_FILE_NAME


# --- the form's text: UTF-8, as every /v1 body is -------------------------------------------

FORM_TEXT_ENCODING = "utf-8-form-text"
NOT_UTF8_MESSAGE = "Not UTF-8: a form's text is sent in UTF-8."


def _form_text_codec(name: str) -> codecs.CodecInfo | None:
    """UTF-8 that keeps each byte that is not UTF-8 as a lone surrogate (surrogateescape),
    whatever error handler its caller names. Django's parser decodes each text part with
    errors="replace": `caf\\xe9` (Windows-1252) became "caf\\ufffd", a character the client
    never sent, and was stored so. The surrogate says which part was not UTF-8
    (`_refuse_text_not_utf8`); a U+FFFD sent in UTF-8 stays the text it is."""
    if name.replace("-", "_") != FORM_TEXT_ENCODING.replace("-", "_"):
        return None
    return codecs.CodecInfo(
        name=FORM_TEXT_ENCODING,
        encode=codecs.utf_8_encode,
        decode=lambda data, errors="strict": codecs.utf_8_decode(data, "surrogateescape", True),
    )


codecs.register(_form_text_codec)


def _refuse_text_not_utf8(fields: MultiValueDict) -> None:
    """A 400 naming each text part whose bytes were not UTF-8, any part (one the form does not
    take too: the body is not UTF-8), before anything reads the form: nothing is stored."""
    refused = {
        snake(name): [NOT_UTF8_MESSAGE]
        for name, values in fields.lists()
        if any(_NOT_UTF8.search(value) for value in values)
    }
    if refused:
        raise ValidationError(refused, code="not_utf8")


class UploadFormParser(CamelCaseMultiPartParser):
    """The upload routes' multipart parser: camelCase part names, files kept by
    `NamedFilePartParser`, the text parts read as UTF-8 as every /v1 body is (multipart/form-data
    defines no charset parameter, RFC 7578; Django read the fields in the one sent), and one
    that is not UTF-8 refused (400 naming it) rather than read with U+FFFD in its place. A file
    part's bytes are the file's; its name keeps `_readable_header`'s rule."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        request = parser_context["request"]
        meta = request.META.copy()
        meta["CONTENT_TYPE"] = media_type
        try:
            parser = NamedFilePartParser(meta, stream, request.upload_handlers, FORM_TEXT_ENCODING)
            data, files = parser.parse()
        except MultiPartParserError as exc:
            raise ParseError(f"Multipart form parse error - {exc}") from exc
        _refuse_text_not_utf8(data)
        return DataAndFiles(_snake_keys(data, QueryDict(mutable=True)), _snake_keys(files))


def read_upload_form(request, limit: int = MAX_FILE_BYTES) -> LimitedUploadHandler:
    """A multipart upload outside /v1 (the back-office's, apps.documents.admin) read as the
    upload routes read theirs: the size limit and the digests (`prepare_upload`), a file kept
    whatever its name, the text parts as UTF-8 (one that is not: a ValidationError naming it,
    nothing stored). Installed as the request's POST and FILES, so that what reads them next
    (the CSRF check, the form) reads these; call before anything reads the body."""
    handler = prepare_upload(request, limit)
    if request.content_type != "multipart/form-data":
        return handler  # Django's own parsing: no file, which the form refuses
    try:
        parser = NamedFilePartParser(
            request.META, request, request.upload_handlers, FORM_TEXT_ENCODING
        )
        data, files = parser.parse()
    except MultiPartParserError as exc:
        raise ParseError(f"Multipart form parse error - {exc}") from exc
    request._post, request._files = data, files
    _refuse_text_not_utf8(data)
    return handler


def _snake_keys(parts: MultiValueDict, into: MultiValueDict | None = None) -> MultiValueDict:
    """`parts` under snake_case names, every part kept: two parts of one name (`clientId`
    twice, or `clientId` and `client_id`) stay two values of it, for the form to refuse
    (apps.core.serializers.SingleValuedFormSerializer); the library's conversion kept the last
    of each spelling."""
    into = MultiValueDict() if into is None else into
    for name, values in parts.lists():
        for value in values:
            into.appendlist(snake(name), value)
    return into
