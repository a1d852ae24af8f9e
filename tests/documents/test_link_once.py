"""A document's download link is signed once per document in an answer: its downloadUrl and
its expiresAtUtc come from the same link, whatever endpoint answers it."""

from __future__ import annotations

from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.documents import storage
from tests.documents.test_api import PDF, PNG, upload

pytestmark = pytest.mark.django_db


def _signed(call):
    with mock.patch.object(
        storage.signing, "TimestampSigner", wraps=storage.signing.TimestampSigner
    ) as signer:
        response = call()
    assert response.status_code in (200, 201), response.content
    return response.json(), signer.call_count


def test_each_answer_signs_one_link_per_document(api, carrier):
    body, signed = _signed(lambda: upload(api, carrier, content=PDF))
    assert signed == 1
    _, signed = _signed(lambda: upload(api, carrier, name="keyed.pdf", key="k-1"))
    assert signed == 1
    _, signed = _signed(lambda: upload(api, carrier, name="keyed.pdf", key="k-1"))  # replayed
    assert signed == 0
    for n in range(3):
        upload(api, carrier, name=f"{n}.pdf")
    listed, signed = _signed(lambda: api.get(f"/v1/documents/clients?clientId={carrier.id}"))
    assert listed["count"] == 5 and signed == 5
    replaced, signed = _signed(
        lambda: api.put(
            f"/v1/documents/{body['id']}/client",
            {"file": SimpleUploadedFile("v2.png", PNG)},
            format="multipart",
        )
    )
    assert signed == 1
    link, signed = _signed(lambda: api.get(f"/v1/documents/{body['id']}/client/download"))
    assert signed == 1 and set(link) == {"documentId", "downloadUrl", "expiresAtUtc"}
