"""File names that fit a client's file system fit ours: a name of 255 bytes or more in UTF-8
(127 x "é" + ".txt" is 258) was stored under that name and the file system refused it (503,
"Document storage is unavailable"). The document keeps the name it was sent, cleaned; the file
in storage has a name cut to fit in bytes, on a character boundary, with its extension."""

from __future__ import annotations

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
