"""Document files in Django's default storage (filesystem or S3), and their download links."""

from __future__ import annotations

import codecs
import datetime as dt
import re
import time
import unicodedata
import uuid
from collections.abc import Callable

import filetype
from django.conf import settings
from django.core import signing
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.text import get_valid_filename
from rest_framework.exceptions import UnsupportedMediaType, ValidationError

from apps.core.exceptions import ServiceUnavailable

SIGNING_SALT = "documents.download"
SNIFF_BYTES = 8192


# A document's name is kept as sent (cleaned) up to its column's length, 255 characters: any
# name a client's file system could hold. The file in storage is named after it, cut to fit
# a file system's 255 BYTES (UTF-8) with room for a suffix the storage may add.
MAX_FILE_NAME_CHARS = 255
MAX_STORED_NAME_BYTES = 200
MAX_EXTENSION_CHARS = 16  # a longer "extension" is part of the name, cut with it
FALLBACK_FILE_NAME = "document"  # a name that cleans to nothing


def clean_file_name(raw: str | None) -> str:
    """Keep only a safe base name: no directories, no control or shell characters, at most
    MAX_FILE_NAME_CHARS characters (its extension kept)."""
    base = (raw or "").replace("\\", "/").split("/")[-1].strip()
    # Composed, so that an accent sent as a combining mark (macOS names) is kept, not dropped.
    base = unicodedata.normalize("NFC", base)
    base = "".join(ch for ch in base if ch.isprintable())
    try:
        cleaned = get_valid_filename(base) if base else ""
    except Exception:  # Django refuses names like ".." outright
        cleaned = ""
    cleaned = _shorten(cleaned.lstrip("."), MAX_FILE_NAME_CHARS, len)
    return cleaned or FALLBACK_FILE_NAME


def stored_file_name(file_name: str) -> str:
    """The name of a cleaned `file_name` in storage: at most MAX_STORED_NAME_BYTES in UTF-8,
    cut between characters, its extension kept."""
    return _shorten(file_name, MAX_STORED_NAME_BYTES, _utf8_size) or FALLBACK_FILE_NAME


def _utf8_size(text: str) -> int:
    return len(text.encode())


def _shorten(name: str, limit: int, size: Callable[[str], int]) -> str:
    """`name` cut to `size` at most `limit`, on a character boundary, its extension kept."""
    if size(name) <= limit:
        return name
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem or len(extension) > MAX_EXTENSION_CHARS:
        stem, extension = name, ""
    else:
        extension = "." + extension
    room = limit - size(extension)
    # Characters are at most 4 bytes: drop the surplus at once, then one at a time.
    stem = stem[:room]
    while size(stem) > room:
        stem = stem[: -max(1, (size(stem) - room) // 4)]
    return stem + extension


def sniff_content_type(file) -> str:
    """The type the bytes say, never what the client claimed."""
    file.seek(0)
    head = file.read(SNIFF_BYTES)
    file.seek(0)
    kind = filetype.guess(head)
    if kind is not None:
        return kind.mime
    text = _decoded_text(head, complete=len(head) < SNIFF_BYTES)
    if text is None:
        return "application/octet-stream"
    return _text_kind(text)


# Bytes no single-byte text holds: the C0 controls but tab, LF, FF and CR, and DEL. The range
# 0x80-0x9F is text in Windows-1252 (curly quotes, the euro sign).
_SINGLE_BYTE_CONTROLS = re.compile(rb"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_TEXT_CONTROLS = frozenset("\t\n\x0c\r")


def _decoded_text(head: bytes, *, complete: bool) -> str | None:
    """The sample as text: UTF-16 with its byte order mark, UTF-8, or else a single-byte
    encoding (read as Latin-1: only markup is looked for in it); None if it is no text. When
    the sample is not the whole file, a character cut at its end is still text."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = codecs.getincrementaldecoder("utf-16")().decode(head, final=complete)
        except UnicodeDecodeError:  # a lone surrogate: random bytes after the mark
            return None
        controls = (ch for ch in text if unicodedata.category(ch) == "Cc")
        return None if any(ch not in _TEXT_CONTROLS for ch in controls) else text
    if b"\x00" in head:
        return None
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(head, final=complete)
    except UnicodeDecodeError:
        pass
    return None if _SINGLE_BYTE_CONTROLS.search(head) else head.decode("latin-1")


# How a browser tells HTML by its first tag (the WHATWG MIME sniffing standard's list), and
# SVG: the tag's name followed by white space, `>`, `/` or the end of the sample.
def _first_tag(*names: str) -> re.Pattern[str]:
    return re.compile(rf"<(?:{'|'.join(map(re.escape, names))})(?:[\s>/]|$)")


_HTML_START = _first_tag(
    "!doctype html", "html", "head", "body", "script", "iframe", "h1", "div", "font", "table",
    "a", "style", "title", "b", "br", "p",
)  # fmt: skip
_SVG_START = _first_tag("svg", "!doctype svg")
_LEADING_SPACE = "\ufeff \t\n\x0c\r"
# PHP's open tag, its short echo tag, and the short open tag `<?` followed by white space (PHP
# with short_open_tag on, as libmagic reads it), any case; `<?xml` is none of them.
_PHP_START = ("<?php", "<?=", "<? ", "<?\t", "<?\n", "<?\r")
_LEADING_COMMENTS = re.compile(r"(?:<!--.*?-->[\s\ufeff]*)*", re.DOTALL)


def _text_kind(text: str) -> str:
    """Text is plain text unless it is a document a browser, a shell or PHP would run: judged by
    how it starts (after a byte order mark, white space and comments), as a browser judges
    it, so a CSV that mentions `<html>` in a cell is plain text."""
    start = text.lstrip(_LEADING_SPACE).lower()
    if start.startswith("#!"):
        return "text/x-shellscript"
    if start.startswith(_PHP_START):  # a server with PHP runs it, whatever the file's name
        return "text/x-php"
    commented = start.startswith("<!--")  # a browser takes a leading comment for HTML
    start = start[_LEADING_COMMENTS.match(start).end() :]
    if start.startswith("<?xml"):
        return "image/svg+xml" if "<svg" in start else "application/xml"
    if _SVG_START.match(start):
        return "image/svg+xml"
    if commented or _HTML_START.match(start):
        return "text/html"
    return "text/plain"


# What may be stored (contract section 13), judged by the bytes alone: CSV is plain text.
# The name then tells CSV from other plain text (`check_upload`).
ALLOWED_CONTENT_TYPES = {
    "application/pdf": "PDF",
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/tiff": "TIFF",
    "image/webp": "WEBP",
    "application/msword": "DOC",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "DOCX",
    "application/vnd.ms-excel": "XLS",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "XLSX",
    "text/csv": "CSV",
    "text/plain": "plain text",
}


def check_upload(file) -> str:
    """The file's sniffed type if it may be stored: an empty file is 400, any type outside
    ALLOWED_CONTENT_TYPES (an executable declared as PDF, an archive, HTML, SVG, a script)
    is 415 naming what the bytes are. The client's declared type and the file name never
    decide what is accepted: both are the attacker's to choose. Plain text named `.csv` is
    text/csv, CSV being a type of its own: the name only tells one harmless text from another."""
    if not getattr(file, "size", 0):
        raise ValidationError({"file": ["The file is empty."]})
    content_type = sniff_content_type(file)
    if content_type == "text/plain" and (file.name or "").lower().endswith(".csv"):
        content_type = "text/csv"
    if content_type not in ALLOWED_CONTENT_TYPES:
        allowed = ", ".join(dict.fromkeys(ALLOWED_CONTENT_TYPES.values()))
        raise UnsupportedMediaType(
            content_type,
            detail=f"The file is {content_type}; accepted types are {allowed}.",
        )
    return content_type


def store(file, *, client_id: int, agency_id: int, file_name: str, content_type: str) -> str:
    """Save the file under a fresh name, as the type its bytes say (`check_upload`'s): S3
    keeps an object's type and serves it with it, and the type a client declared is the
    client's to choose (text/html over a text file). Storage failures are a 503, never a half
    write."""
    name = f"documents/{agency_id}/{client_id}/{uuid.uuid4().hex}/{stored_file_name(file_name)}"
    file.content_type = content_type  # what django-storages sends as the object's ContentType
    file.seek(0)
    try:
        return default_storage.save(name, file)
    except Exception as exc:  # any backend failure (disk, network, S3) is the same to a client
        raise ServiceUnavailable("Document storage is unavailable; nothing was stored.") from exc


def remove(names: list[str]) -> None:
    """Delete stored files; a file already gone is not an error."""
    for name in names:
        try:
            default_storage.delete(name)
        except FileNotFoundError:
            continue


def download_link(
    request, *, document_id: int, storage_name: str, file_name: str
) -> tuple[str, dt.datetime]:
    """A time-limited URL that is its own credential, and the instant it stops working."""
    ttl = settings.DOCUMENT_URL_TTL_SECONDS
    if settings.DOCUMENTS_STORAGE == "s3":
        # The pre-signed URL is dated by the whole second botocore signs it in, this one or a
        # later one: the link works until the expiry given, or a little past it, never less.
        expires = _expiry(int(time.time()))
        url = default_storage.url(
            storage_name,
            # RFC 6266, as FileResponse writes it: a name past ASCII as `filename*=utf-8''…`
            # (a raw one is no valid header value, and a server may fail to send it at all).
            parameters={"ResponseContentDisposition": content_disposition_header(True, file_name)},
            expire=ttl,
        )
        return url, expires
    token = signing.TimestampSigner(salt=SIGNING_SALT).sign_object(
        {"d": document_id, "n": storage_name}, compress=True
    )
    path = reverse("document-file", kwargs={"token": token})
    url = request.build_absolute_uri(path) if request is not None else path
    return url, _expiry(_signed_at(token))


def read_link(token: str) -> tuple[int, str]:
    """(document id, storage name) of a genuine token before its expiry (the instant
    `download_link` answered); raises signing errors (SignatureExpired from that instant on)."""
    data = signing.TimestampSigner(salt=SIGNING_SALT).unsign_object(token)
    if time.time() >= _expiry(_signed_at(token)).timestamp():
        raise signing.SignatureExpired("This download link has expired.")
    return int(data["d"]), str(data["n"])


def _signed_at(token: str) -> int:
    """The whole second (`int(time.time())`) a genuine token was signed in: TimestampSigner
    writes `payload:timestamp:signature`, the timestamp in base 62."""
    return signing.b62_decode(token.rsplit(":", 2)[1])


def _expiry(signed_at: int) -> dt.datetime:
    """When a link signed in the second `signed_at` stops working: the one instant both the
    answer's `expiresAtUtc` and the check of the link take (DOCUMENT_URL_TTL_SECONDS later).
    Django's own check (`max_age`) took the signing second for the link and the present
    instant, microseconds and all, for the answer: the link died up to a second early."""
    return dt.datetime.fromtimestamp(signed_at + settings.DOCUMENT_URL_TTL_SECONDS, tz=dt.UTC)
