"""File names that fit a client's file system fit ours: a name of 255 bytes or more in UTF-8
(127 x "é" + ".txt" is 258) was stored under that name and the file system refused it (503,
"Document storage is unavailable"). The document keeps the name it was sent, cleaned; the file
in storage has a name cut to fit in bytes, on a character boundary, with its extension."""

from __future__ import annotations

import hashlib
import urllib.parse
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.documents.models import Document, DocumentVersion
from tests.documents.test_api import PDF, upload

pytestmark = pytest.mark.django_db
TEXT = b"unit,vin\n101,1FUJGLDR7CLBP8834\n"
LONG_NAMES = ["é" * 127 + ".txt", "文" * 200, "Ünits-" + "ß" * 240 + ".csv"]


def _stored_base_name(document: Document) -> str:
    return Path(document.storage_name).name


def _downloaded_name(api, document_id: int) -> str:
    link = api.get(f"/v1/documents/{document_id}/client/download").json()["downloadUrl"]
    response = APIClient().get(link)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == TEXT
    disposition = response["Content-Disposition"]
    assert disposition.startswith("attachment; filename*=utf-8''"), disposition
    return urllib.parse.unquote(disposition.split("''", 1)[1])


@pytest.mark.parametrize("name", LONG_NAMES, ids=["e-acute", "cjk", "mixed"])
def test_a_long_non_ascii_name_is_stored_and_keeps_its_name(api, carrier, name):
    response = upload(api, carrier, content=TEXT, name=name)
    assert response.status_code == 201, response.content
    assert response.json()["fileName"] == name
    document = Document.objects.get()
    stored = _stored_base_name(document)
    assert len(stored.encode()) <= 255
    assert name.startswith(Path(stored).stem) and Path(stored).suffix == Path(name).suffix
    assert _downloaded_name(api, document.pk) == name


@pytest.mark.parametrize("name", LONG_NAMES, ids=["e-acute", "cjk", "mixed"])
def test_a_replacement_with_a_long_non_ascii_name_is_stored(api, carrier, name):
    document = upload(api, carrier).json()
    response = api.put(
        f"/v1/documents/{document['id']}/client",
        {"file": SimpleUploadedFile(name, TEXT)},
        format="multipart",
    )
    assert response.status_code == 200, response.content
    assert response.json()["fileName"] == name
    assert len(_stored_base_name(Document.objects.get()).encode()) <= 255
    assert DocumentVersion.objects.get().file_name == "coi.pdf"
    assert _downloaded_name(api, document["id"]) == name


def test_a_name_longer_than_255_characters_is_cut_keeping_its_extension(api, carrier):
    response = upload(api, carrier, content=PDF, name="a" * 300 + ".pdf")
    assert response.status_code == 201, response.content
    assert response.json()["fileName"] == "a" * 251 + ".pdf"


def test_an_accent_sent_as_a_combining_mark_is_kept(api, carrier):
    # macOS names its files decomposed: "é" is "e" and U+0301, which the cleaner dropped.
    response = upload(api, carrier, content=PDF, name="Jose\u0301 Montre\u0301al.pdf")
    assert response.status_code == 201, response.content
    assert response.json()["fileName"] == "José_Montréal.pdf"


def _multipart(file_name: bytes, content: bytes, **fields) -> tuple[bytes, str]:
    """A multipart body whose file part names `file_name` byte for byte, as a client sends it."""
    boundary = b"----names-boundary"
    parts = [
        b'--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n'
        % (boundary, name.encode(), str(value).encode())
        for name, value in fields.items()
    ]
    parts.append(
        b'--%s\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\n'
        b"Content-Type: application/pdf\r\n\r\n%s\r\n" % (boundary, file_name, content)
    )
    body = b"".join(parts) + b"--%s--\r\n" % boundary
    return body, f"multipart/form-data; boundary={boundary.decode()}"


# Names Django's multipart parser dropped the part for ("file: No file was submitted."), while
# "..." was stored as "document": each cleans to nothing, so each is stored as "document".
NAMES_THAT_CLEAN_TO_NOTHING = [b"..", b".", b"...", b"/", b"\xff\xfe", b"\xff\xfe.\xe9"]


@pytest.mark.parametrize("file_name", NAMES_THAT_CLEAN_TO_NOTHING)
def test_a_name_that_cleans_to_nothing_is_stored_as_document(api, carrier, file_name):
    body, content_type = _multipart(file_name, PDF, clientId=carrier.id)
    response = api.post("/v1/documents/clients", body, content_type=content_type)
    assert response.status_code == 201, response.content
    assert response.json()["fileName"] == "document"
    assert _downloaded_pdf_name(api, response.json()["id"]) == "document"


@pytest.mark.parametrize("file_name", NAMES_THAT_CLEAN_TO_NOTHING)
def test_a_replacement_whose_name_cleans_to_nothing_is_named_document(api, carrier, file_name):
    document = upload(api, carrier).json()
    body, content_type = _multipart(file_name, PDF)
    response = api.put(f"/v1/documents/{document['id']}/client", body, content_type=content_type)
    assert response.status_code == 200, response.content
    assert response.json()["fileName"] == "document"


@pytest.mark.parametrize(
    "file_name, kept",
    [
        # Bytes that are not UTF-8 are characters a name may not hold: removed, the rest kept.
        (b"\xff\xfe.txt", "txt"),
        (b"caf\xe9 menu.pdf", "caf_menu.pdf"),
        (b"\xff/\xfe/r\xe9sum\xe9.pdf", "rsum.pdf"),
    ],
)
def test_a_name_not_sent_in_utf8_keeps_what_it_can(api, carrier, file_name, kept):
    body, content_type = _multipart(file_name, PDF, clientId=carrier.id, description="menu")
    response = api.post("/v1/documents/clients", body, content_type=content_type)
    assert response.status_code == 201, response.content
    assert response.json()["fileName"] == kept
    assert response.json()["description"] == "menu"


@pytest.mark.parametrize(
    "file_name, kept", [(b"../../etc/passwd.pdf", "passwd.pdf"), (b"..\\..\\x.pdf", "x.pdf")]
)
def test_directories_in_a_name_are_still_dropped(api, carrier, file_name, kept):
    body, content_type = _multipart(file_name, PDF, clientId=carrier.id)
    response = api.post("/v1/documents/clients", body, content_type=content_type)
    assert response.status_code == 201, response.content
    assert response.json()["fileName"] == kept
    assert ".." not in Document.objects.get().storage_name


def _downloaded_pdf_name(api, document_id: int) -> str:
    link = api.get(f"/v1/documents/{document_id}/client/download").json()["downloadUrl"]
    response = APIClient().get(link)
    assert b"".join(response.streaming_content) == PDF
    return response["Content-Disposition"].split("filename=", 1)[1].strip('"')


def test_the_files_bytes_pass_untouched_whatever_they_hold(api, carrier):
    # Bytes that are not UTF-8, blank lines and header-like text inside the file are content:
    # only the parts' header blocks are read for their names.
    content = (
        PDF + b'\xff\xfe\r\n\r\nContent-Disposition: form-data; filename="\xff"\r\n\r\n' * 3000
    )
    body, content_type = _multipart(b"\xffscan.pdf", content, clientId=carrier.id)
    response = api.post("/v1/documents/clients", body, content_type=content_type)
    assert response.status_code == 201, response.content
    assert response.json()["fileName"] == "scan.pdf"
    assert response.json()["sha256"] == hashlib.sha256(content).hexdigest()
    assert response.json()["size"] == len(content)
    link = api.get(f"/v1/documents/{response.json()['id']}/client/download").json()
    assert b"".join(APIClient().get(link["downloadUrl"]).streaming_content) == content


class _Trickle:
    """A request body read a few bytes at a time, so every boundary and header block is cut
    somewhere by a read."""

    def __init__(self, body: bytes):
        self._body, self._at, self._step = body, 0, 0

    def read(self, size=-1):
        self._step = self._step % 7 + 1
        piece = self._body[self._at : self._at + self._step]
        self._at += len(piece)
        return piece


def test_parts_are_read_whatever_the_reads_cut():
    from django.core.files.uploadhandler import MemoryFileUploadHandler

    from apps.documents.uploads import NamedFilePartParser

    content = b"%PDF-1.4\r\n\r\n--not-the-boundary\r\n\xff\xfe" * 50
    body, content_type = _multipart(b"r\xe9sum\xe9.pdf", content, clientId=7, description="\xe9")
    meta = {"CONTENT_TYPE": content_type, "CONTENT_LENGTH": str(len(body))}
    parser = NamedFilePartParser(meta, _Trickle(body), [MemoryFileUploadHandler()], "utf-8")
    data, files = parser.parse()
    assert data["clientId"] == "7" and data["description"] == "\xe9"
    assert files["file"].name == "r?sum?.pdf"  # cleaned to "rsum.pdf" when stored
    assert files["file"].read() == content
