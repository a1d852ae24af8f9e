"""Multipart bodies past Django's limits on form fields (DATA_UPLOAD_MAX_NUMBER_FIELDS, 1,000)
and on file parts (DATA_UPLOAD_MAX_NUMBER_FILES, 100) are a 400 problem+json on an upload and
on a replacement, as a query string past the field limit is; nothing is stored."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.documents.models import Document, DocumentVersion
from tests.conftest import assert_problem
from tests.documents.test_api import PDF, stored_files, upload
from tests.factories import PolicyFactory

pytestmark = pytest.mark.django_db
FIELDS_DETAIL = "Too many fields: at most 1000 are accepted."
FILES_DETAIL = "Too many files: at most 100 are accepted."


@pytest.fixture
def api(api):
    api.raise_request_exception = False  # the answer a client gets, whatever was raised
    return api


def _fields(count: int) -> dict[str, str]:
    # The owner id is one field already: `count` more make count + 1 in all.
    return {f"note{i}": "x" for i in range(count)}


def _files(count: int) -> dict[str, SimpleUploadedFile]:
    # With the `file` part, count + 1 file parts in all.
    return {f"attachment{i}": SimpleUploadedFile(f"a{i}.pdf", PDF) for i in range(count)}


def _owner(carrier, module: str):
    return carrier if module == "clients" else PolicyFactory(client=carrier)


@pytest.mark.parametrize("module", ["clients", "policies"])
def test_upload_with_more_than_1000_form_fields_is_400(api, carrier, module, settings):
    response = upload(api, _owner(carrier, module), module=module, **_fields(1000))
    assert assert_problem(response, 400)["detail"] == FIELDS_DETAIL
    assert not Document.objects.exists() and not stored_files(settings)


@pytest.mark.parametrize("module", ["clients", "policies"])
def test_upload_with_more_than_100_files_is_400(api, carrier, module, settings):
    response = upload(api, _owner(carrier, module), module=module, **_files(100))
    assert assert_problem(response, 400)["detail"] == FILES_DETAIL
    assert not Document.objects.exists() and not stored_files(settings)


def test_upload_at_the_limits_is_accepted(api, carrier):
    response = upload(api, carrier, **_fields(999), **_files(99))
    assert response.status_code == 201, response.content


def test_a_repeat_with_an_idempotency_key_is_400_too(api, carrier):
    for _ in range(2):
        response = upload(api, carrier, key="too-many-fields", **_fields(1000))
        assert assert_problem(response, 400)["detail"] == FIELDS_DETAIL
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    "extra,detail",
    [(_fields(1001), FIELDS_DETAIL), (_files(100), FILES_DETAIL)],
    ids=["fields", "files"],
)
def test_replacement_past_the_limits_is_400_and_keeps_the_file(
    api, carrier, extra, detail, settings
):
    document = upload(api, carrier).json()
    before = stored_files(settings)
    response = api.put(
        f"/v1/documents/{document['id']}/client",
        {"file": SimpleUploadedFile("v2.pdf", b"%PDF-1.4\n%v2\n"), **extra},
        format="multipart",
    )
    assert assert_problem(response, 400)["detail"] == detail
    assert not DocumentVersion.objects.exists()
    assert Document.objects.get().sha256 == document["sha256"]
    assert stored_files(settings) == before


def test_a_query_string_past_the_field_limit_is_the_same_400(api, carrier):
    query = "&".join(f"note{i}=x" for i in range(1000))
    response = api.get(f"/v1/documents/clients?clientId={carrier.id}&{query}")
    assert assert_problem(response, 400)["detail"] == FIELDS_DETAIL
