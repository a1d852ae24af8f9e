"""An upload's text parts are UTF-8, as every /v1 body is (docs/api_intro.md, Request bodies):
a part whose bytes are not (`caf\\xe9`, Windows-1252) is a 400 naming it and nothing is stored,
where it was stored with U+FFFD in place of each byte. The file's bytes are the file's own, and
a file NAME that is not UTF-8 keeps its documented rule (those bytes are dropped)."""

from __future__ import annotations

import pytest

from apps.documents.models import Document, DocumentVersion
from tests.conftest import assert_problem
from tests.documents.test_api import PDF, stored_files
from tests.factories import PolicyFactory

pytestmark = pytest.mark.django_db

BOUNDARY = "TeXtPaRtS"
MESSAGE = "Not UTF-8: a form's text is sent in UTF-8."


def form(*parts: tuple[str, bytes], file_name: bytes = b"coi.pdf", file: bytes = PDF) -> bytes:
    """A multipart body: text parts (name, bytes as sent), then the file."""
    body = b""
    for name, value in parts:
        body += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        body += value + b"\r\n"
    body += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="'.encode()
    body += file_name + b'"\r\nContent-Type: application/pdf\r\n\r\n' + file + b"\r\n"
    return body + f"--{BOUNDARY}--\r\n".encode()


def send(api, method: str, path: str, body: bytes, **headers):
    content_type = f"multipart/form-data; boundary={BOUNDARY}"
    return api.generic(method, path, body, content_type=content_type, **headers)


def refused(response) -> list[tuple[str, str]]:
    return [(e["field"], e["message"]) for e in assert_problem(response, 400)["errors"]]


@pytest.mark.parametrize(
    ("field", "sent"),
    [
        ("description", b"caf\xe9"),
        ("description", b"\xff\xfe"),
        ("description", b"caf\xc3"),  # a character cut short
        ("clientId", b"3\xe9"),
        ("note", b"caf\xe9"),  # a part the form does not take is text of the body too
    ],
)
def test_a_client_upload_text_part_not_in_utf8_is_400_naming_it(
    api, carrier, settings, field, sent
):
    parts = {"clientId": str(carrier.id).encode(), "description": b"Registration"}
    parts[field] = sent
    response = send(api, "POST", "/v1/documents/clients", form(*parts.items()))
    assert refused(response) == [(field, MESSAGE)]
    assert not Document.objects.exists() and not stored_files(settings)


def test_a_policy_upload_text_part_not_in_utf8_is_400_naming_it(api, carrier, settings):
    policy = PolicyFactory(client=carrier)
    body = form(("policyId", f"{policy.id}\xa0".encode("cp1252")), ("description", b"ok"))
    response = send(api, "POST", "/v1/documents/policies", body)
    assert refused(response) == [("policyId", MESSAGE)]
    assert not Document.objects.exists() and not stored_files(settings)


def test_a_replacement_text_part_not_in_utf8_is_400(api, carrier):
    created = send(api, "POST", "/v1/documents/clients", form(("clientId", b"%d" % carrier.id)))
    assert created.status_code == 201, created.content
    body = form(("description", b"caf\xe9"), file_name=b"v2.pdf", file=PDF + b"v2")
    response = send(api, "PUT", f"/v1/documents/{created.json()['id']}/client", body)
    assert refused(response) == [("description", MESSAGE)]
    assert not DocumentVersion.objects.exists()
    assert Document.objects.get().file_name == "coi.pdf"


def test_utf8_text_is_kept_as_sent_a_sent_replacement_character_too(api, carrier):
    text = "café \ufffd 文"
    body = form(("clientId", b"%d" % carrier.id), ("description", text.encode()))
    response = send(api, "POST", "/v1/documents/clients", body)
    assert response.status_code == 201, response.content
    assert response.json()["description"] == text


def test_a_file_name_not_in_utf8_keeps_its_rule(api, carrier):
    body = form(("clientId", b"%d" % carrier.id), file_name=b"caf\xe9.pdf")
    response = send(api, "POST", "/v1/documents/clients", body)
    assert response.status_code == 201, response.content
    assert response.json()["fileName"] == "caf.pdf"


def test_the_refusal_holds_no_idempotency_key(api, carrier):
    # A body that cannot be read is refused before the key is taken, as a broken form is:
    # the same key with the text sent in UTF-8 is a first request, not a different one (422).
    key = {"HTTP_IDEMPOTENCY_KEY": "latin-1-retry"}
    bad = form(("clientId", b"%d" % carrier.id), ("description", b"caf\xe9"))
    assert refused(send(api, "POST", "/v1/documents/clients", bad, **key))
    good = form(("clientId", b"%d" % carrier.id), ("description", "café".encode()))
    response = send(api, "POST", "/v1/documents/clients", good, **key)
    assert response.status_code == 201, response.content
    assert response.json()["description"] == "café"
