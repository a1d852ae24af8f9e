"""Which text an upload may be (contract section 13: "CSV or plain text"): text in UTF-8,
UTF-16 with a byte order mark, or a single-byte encoding (Windows-1252, Latin-1) without
control bytes other than tab, CR, LF and FF. Markup is judged by how the text starts, as a
browser judges it: an HTML, SVG or XML document is refused, a CSV that mentions `<html>` in a
cell is not."""

from __future__ import annotations

import codecs

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.documents.models import Document
from tests.conftest import assert_problem
from tests.documents.test_api import upload

pytestmark = pytest.mark.django_db
CSV = "name,city\nJosé,Montréal\n"


def _utf16(text: str, order: str = "le") -> bytes:
    bom = codecs.BOM_UTF16_LE if order == "le" else codecs.BOM_UTF16_BE
    return bom + text.encode(f"utf-16-{order}")


ACCEPTED = {
    "windows-1252 csv": b"name,city\nJos\xe9,Montr\xe9al\n",
    "windows-1252 quotes and euro": b"item,note\nfee,\x93due\x94 \x8025\n",
    "latin-1 with a form feed": b"page one \xe9t\xe9\x0cpage two\r\n",
    "utf-16 le csv": _utf16(CSV),
    "utf-16 be csv": _utf16(CSV, "be"),
    "utf-16 cut inside a surrogate pair": _utf16("a" * 4094 + "\U0001f600" * 10),
    "html in a later line": b"unit,note\n101,use <html> and <script> in the body\n",
    "svg in a cell": b"unit,icon\n101,<svg/>\n",
    "a tag that is not html": b"<unit>101</unit>\n",
    "php mentioned in a later line": b"unit,note\n101,<?php is not run here\n",
}


@pytest.mark.parametrize("content", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_text_named_csv_is_accepted_as_csv(api, carrier, content):
    # CSV is a type of its own (contract 13); the bytes say text, the name which text.
    response = upload(api, carrier, content=content, name="units.CSV")
    assert response.status_code == 201, response.content
    assert response.json()["contentType"] == "text/csv"
    assert Document.objects.get().content_type == "text/csv"


@pytest.mark.parametrize("name", ["notes.txt", "units.csv.txt", "csv"])
def test_other_text_is_accepted_as_plain_text(api, carrier, name):
    response = upload(api, carrier, content=ACCEPTED["windows-1252 csv"], name=name)
    assert response.status_code == 201, response.content
    assert response.json()["contentType"] == "text/plain"


def test_a_replacement_may_be_windows_1252_text(api, carrier):
    document = upload(api, carrier).json()
    response = api.put(
        f"/v1/documents/{document['id']}/client",
        {"file": SimpleUploadedFile("units.csv", ACCEPTED["windows-1252 csv"])},
        format="multipart",
    )
    assert response.status_code == 200, response.content
    assert response.json()["contentType"] == "text/csv"


REFUSED = {
    "html after whitespace and a bom": (
        b"\xef\xbb\xbf\r\n  <html><body>hi</body></html>",
        "text/html",
    ),
    "html in utf-16": (_utf16("<!DOCTYPE html><html><script>alert(1)</script>"), "text/html"),
    "body": (b"<BODY onload=alert(1)>", "text/html"),
    "script": (b"<script>alert(1)</script>", "text/html"),
    "comment then html": (b"<!-- saved -->\n<html>", "text/html"),
    "svg": (b'<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>', "image/svg+xml"),
    "comment then svg": (b"<!-- Generator -->\n<svg/>", "image/svg+xml"),
    "svg doctype": (b'<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN">', "image/svg+xml"),
    "xml": (b'<?xml version="1.0"?><note/>', "application/xml"),
    "svg in utf-16": (_utf16('<svg xmlns="http://www.w3.org/2000/svg"/>'), "image/svg+xml"),
    "script in windows-1252": (b"#!/bin/sh\necho Jos\xe9\n", "text/x-shellscript"),
    "php": (b"<?php echo $_GET['c']; ?>\n", "text/x-php"),
    "php after a bom and white space, in capitals": (
        b"\xef\xbb\xbf\r\n <?PHP system($c);",
        "text/x-php",
    ),
    "php short echo tag": (b"<?= $_GET['c'] ?>\n", "text/x-php"),
    "php short open tag, then a line": (b"<?\nsystem($_GET[1]);\n?>\n", "text/x-php"),
    "php short open tag, then a space": (b"<? system($_GET[1]); ?>\n", "text/x-php"),
    "php short open tag, then crlf": (b"<?\r\nsystem($_GET[1]);\r\n?>\r\n", "text/x-php"),
    "php in utf-16": (_utf16("<?php echo 1;"), "text/x-php"),
    "single bytes with a control byte": (b"Jos\xe9\x01\x02", "application/octet-stream"),
    "utf-16 bom then binary": (b"\xff\xfe" + bytes(range(256)) * 4, "application/octet-stream"),
    "utf-16 bom then a lone surrogate": (b"\xff\xfea\x00\x00\xd8b\x00", "application/octet-stream"),
}


@pytest.mark.parametrize("content,detected", REFUSED.values(), ids=REFUSED.keys())
def test_markup_and_binaries_are_refused(api, carrier, content, detected):
    body = assert_problem(upload(api, carrier, content=content, name="units.csv"), 415)
    assert body["detail"].startswith(f"The file is {detected};")
    assert not Document.objects.exists()
