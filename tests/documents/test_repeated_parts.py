"""A form field that takes one value, sent twice, is a 400 naming it, on every upload route
(POST and PUT of documents), and nothing is stored: the rule of a query parameter sent twice
(contract section 13). Django's form data keeps every part and the serializers read the last:
`-F clientId=3 -F clientId=1` uploaded to client 1, two `file` parts stored the second. A part
the form does not take is ignored, repeated or not."""

from __future__ import annotations

import pytest
from django.test.client import encode_multipart

from apps.documents.models import Document, DocumentVersion
from tests.conftest import assert_problem
from tests.factories import ClientFactory, PolicyFactory

pytestmark = pytest.mark.django_db

BOUNDARY = "PaRtS"
PDF = b"%PDF-1.4\n%demo\n"


def form(*parts: tuple[str, str | bytes]) -> bytes:
    """A multipart body with `parts` in order: (name, text) fields and (name, bytes) files."""
    body = b""
    for name, value in parts:
        if isinstance(value, bytes):
            head = f'Content-Disposition: form-data; name="{name}"; filename="{name}.pdf"'
            body += f"--{BOUNDARY}\r\n{head}\r\nContent-Type: application/pdf\r\n\r\n".encode()
            body += value + b"\r\n"
        else:
            head = f'Content-Disposition: form-data; name="{name}"'
            body += f"--{BOUNDARY}\r\n{head}\r\n\r\n{value}\r\n".encode()
    return body + f"--{BOUNDARY}--\r\n".encode()


def send(api, method: str, path: str, *parts):
    return api.generic(
        method, path, form(*parts), content_type=f"multipart/form-data; boundary={BOUNDARY}"
    )


def refused_fields(response) -> list[tuple[str, str, str]]:
    return [(e["field"], e["message"], e["code"]) for e in assert_problem(response, 400)["errors"]]


def test_a_client_id_sent_twice_is_400_and_nothing_is_stored(api, carrier, agency):
    other = ClientFactory(agency=agency)
    response = send(
        api,
        "POST",
        "/v1/documents/clients",
        ("clientId", str(carrier.id)),
        ("clientId", str(other.id)),
        ("file", PDF),
    )
    assert refused_fields(response) == [("clientId", "Send this field once.", "repeated")]
    assert not Document.objects.exists()


def test_two_files_are_400_and_nothing_is_stored(api, carrier, settings):
    response = send(
        api,
        "POST",
        "/v1/documents/clients",
        ("clientId", str(carrier.id)),
        ("file", PDF),
        ("file", PDF + b"2"),
    )
    assert refused_fields(response) == [("file", "Send this field once.", "repeated")]
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    ("parts", "field"),
    [
        ([("policyId", "{policy}"), ("policyId", "{policy}"), ("file", PDF)], "policyId"),
        (
            [("policyId", "{policy}"), ("description", "a"), ("description", "b"), ("file", PDF)],
            "description",
        ),
        ([("policyId", "{policy}"), ("policy_id", "{policy}"), ("file", PDF)], "policyId"),
    ],
    ids=["same-value-twice", "description", "two-spellings"],
)
def test_every_field_of_a_policy_upload_takes_one_value(api, carrier, parts, field):
    policy = PolicyFactory(client=carrier)
    sent = [(name, v.format(policy=policy.id) if isinstance(v, str) else v) for name, v in parts]
    response = send(api, "POST", "/v1/documents/policies", *sent)
    assert refused_fields(response) == [(field, "Send this field once.", "repeated")]
    assert not Document.objects.exists()


def test_a_replacement_with_two_files_is_400_and_changes_nothing(api, carrier):
    first = send(api, "POST", "/v1/documents/clients", ("clientId", str(carrier.id)), ("file", PDF))
    assert first.status_code == 201, first.content
    path = f"/v1/documents/{first.json()['id']}/client"
    response = send(api, "PUT", path, ("file", PDF + b"2"), ("file", PDF + b"3"))
    assert refused_fields(response) == [("file", "Send this field once.", "repeated")]
    assert not DocumentVersion.objects.exists()
    assert Document.objects.get().sha256 == first.json()["sha256"]


def test_a_part_the_form_does_not_take_is_ignored_repeated_or_not(api, carrier):
    response = send(
        api,
        "POST",
        "/v1/documents/clients",
        ("clientId", str(carrier.id)),
        ("note", "a"),
        ("note", "b"),
        ("file", PDF),
    )
    assert response.status_code == 201, response.content
    assert response.json()["clientId"] == carrier.id


def test_encode_multipart_is_what_the_test_client_sends():
    # The helper above writes what Django's own encoder writes for one value per name.
    ours = form(("clientId", "7"))
    theirs = encode_multipart(BOUNDARY, {"clientId": "7"})
    assert ours == theirs
