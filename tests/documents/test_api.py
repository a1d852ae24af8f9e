"""Documents: spec sections 3, 4 and 8; contract sections 4 and 11."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import math
import time
from pathlib import Path
from unittest import mock

import pytest
from django.contrib.auth.models import Permission
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.core.models import IdempotencyRecord
from apps.documents.models import Document, DocumentVersion
from apps.documents.uploads import MAX_FILE_BYTES
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import ClientFactory, PolicyFactory, UserFactory

pytestmark = pytest.mark.django_db
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
PDF = b"%PDF-1.4\n%demo\n"


@pytest.fixture
def policy(carrier):
    return PolicyFactory(client=carrier)


def upload(api, owner, content=PDF, name="coi.pdf", module="clients", key=None, **fields):
    owner_field = "clientId" if module == "clients" else "policyId"
    data = {
        "file": SimpleUploadedFile(name, content, content_type="text/plain"),
        owner_field: owner.id,
        **fields,
    }
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return api.post(f"/v1/documents/{module}", data, format="multipart", **headers)


def stored_files(settings) -> list[Path]:
    root = Path(settings.MEDIA_ROOT)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


# --- upload ------------------------------------------------------------------------------


def test_upload_sniffs_type_hashes_and_sanitises(api, carrier):
    response = upload(
        api, carrier, content=PNG, name="../../etc/My Scan$.pdf", description="Registration"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["fileName"] == "My_Scan.pdf"
    assert body["contentType"] == "image/png"  # the bytes, not the client's claim
    assert body["size"] == len(PNG)
    assert body["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert body["description"] == "Registration"
    assert body["module"] == "client" and body["clientId"] == carrier.id
    assert body["downloadUrl"].startswith("http://testserver/downloads/")
    assert body["expiresAtUtc"].endswith("Z")
    assert response["Location"].endswith(f"/v1/documents/{body['id']}/client/download")
    document = Document.objects.get()
    assert default_storage.open(document.storage_name).read() == PNG


def test_policy_upload(api, policy):
    response = upload(api, policy, module="policies")
    assert response.status_code == 201
    assert response.json()["module"] == "policy"
    assert response.json()["policyId"] == policy.id


@pytest.mark.parametrize("missing", ["file", "clientId"])
def test_upload_requires_parts(api, carrier, missing):
    data = {"file": SimpleUploadedFile("a.pdf", PDF), "clientId": carrier.id}
    del data[missing]
    body = assert_problem(api.post("/v1/documents/clients", data, format="multipart"), 400)
    assert missing in field_errors(body)


def test_upload_for_a_hidden_client_is_400(api, other_agency, settings):
    rival = ClientFactory(agency=other_agency)
    assert "clientId" in field_errors(assert_problem(upload(api, rival), 400))
    assert not Document.objects.exists() and not stored_files(settings)


def test_upload_as_json_is_415(api, carrier):
    assert_problem(api.post("/v1/documents/clients", {"clientId": carrier.id}, format="json"), 415)


def test_file_of_exactly_25_mib_is_accepted_and_one_byte_more_is_413(api, carrier, settings):
    big = b"%PDF" + b"0" * (MAX_FILE_BYTES - 4)
    assert upload(api, carrier, content=big).status_code == 201
    assert_problem(upload(api, carrier, content=big + b"0"), 413)
    assert Document.objects.count() == 1
    assert len(stored_files(settings)) == 1


def test_declared_oversize_body_is_413_before_reading(api, carrier):
    response = api.post(
        "/v1/documents/clients",
        data=b"x" * 10,
        content_type="multipart/form-data; boundary=zzz",
        CONTENT_LENGTH=str(MAX_FILE_BYTES + 10 * 1024 * 1024),
    )
    assert_problem(response, 413)


def test_chunked_body_without_length_is_limited_too(api, carrier):
    boundary = "zzz"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="clientId"\r\n\r\n{carrier.id}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    for size, expected in ((1024, 201), (MAX_FILE_BYTES + 128 * 1024, 413)):
        payload = body + b"\x01" * size + f"\r\n--{boundary}--\r\n".encode()
        response = api.generic(
            "POST",
            "/v1/documents/clients",
            b"",
            content_type=f"multipart/form-data; boundary={boundary}",
            CONTENT_LENGTH="",
            HTTP_TRANSFER_ENCODING="chunked",
            **{"wsgi.input": io.BytesIO(payload)},
        )
        assert response.status_code == expected, response.content[:300]


def test_storage_failure_is_503_and_leaves_no_row(api, carrier, monkeypatch, settings):
    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(default_storage, "save", broken)
    api.raise_request_exception = False  # a 5xx is also reported to monitoring
    assert_problem(upload(api, carrier), 503)
    assert not Document.objects.exists()


def test_row_failure_leaves_no_file(api, carrier, monkeypatch, settings):
    def broken(self, *args, **kwargs):
        raise RuntimeError("database hiccup")

    monkeypatch.setattr(Document, "full_clean", broken)
    api.raise_request_exception = False
    assert_problem(upload(api, carrier), 500)
    assert not Document.objects.exists()
    assert stored_files(settings) == []


# --- idempotency ---------------------------------------------------------------------------


def test_repeat_with_the_same_key_and_content_is_replayed(api, carrier):
    first = upload(api, carrier, key="upload-1", description="COI")
    second = upload(api, carrier, key="upload-1", description="COI")
    assert first.status_code == second.status_code == 201
    assert second["Idempotent-Replayed"] == "true"
    assert not first.has_header("Idempotent-Replayed")
    assert second.json() == first.json()
    assert Document.objects.count() == 1


def test_quoted_key_is_the_same_key(api, carrier):
    upload(api, carrier, key="k-2")
    assert upload(api, carrier, key='"k-2"')["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize("change", [{"content": b"%PDF-other"}, {"description": "different"}])
def test_same_key_with_other_content_is_422(api, carrier, change):
    upload(api, carrier, key="k-3", description="same")
    kwargs = {"description": "same", **change}
    assert_problem(upload(api, carrier, key="k-3", **kwargs), 422)
    assert Document.objects.count() == 1


def test_a_different_file_name_with_the_same_bytes_is_the_same_request(api, carrier):
    upload(api, carrier, key="k-4", name="a.pdf")
    assert upload(api, carrier, key="k-4", name="b.pdf")["Idempotent-Replayed"] == "true"


def test_key_in_progress_is_409(api, carrier):
    from tests.documents.test_idempotency_abandoned import running_elsewhere

    upload(api, carrier, key="k-5")
    # As if the first request were still running in another process.
    IdempotencyRecord.objects.filter(key="k-5").update(response_status=None, response_body=None)
    with running_elsewhere(IdempotencyRecord.objects.get(key="k-5")):
        response = upload(api, carrier, key="k-5")
    body = assert_problem(response, 409)
    assert body["detail"] == "A request with this Idempotency-Key is still in progress."
    assert response["Retry-After"] == "1"  # a twin's client knows when to ask again
    assert Document.objects.count() == 1


def test_keys_are_scoped_per_user(api, make_api, groups, agency, carrier):
    colleague = UserFactory(username="colleague", agencies=[agency], groups=[groups[0]])
    upload(api, carrier, key="shared")
    response = upload(make_api(colleague), carrier, key="shared")
    assert response.status_code == 201 and not response.has_header("Idempotent-Replayed")
    assert Document.objects.count() == 2


@pytest.mark.parametrize("key", ["", " ", "é-accent", "x" * 256, "tab\tkey"])
def test_malformed_key_is_400(api, carrier, key):
    assert_problem(upload(api, carrier, key=key), 400)


def test_a_5xx_is_not_stored_so_the_client_can_retry(api, carrier, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(default_storage, "save", broken)
    api.raise_request_exception = False
    assert_problem(upload(api, carrier, key="retry-me"), 503)
    monkeypatch.undo()
    retried = upload(api, carrier, key="retry-me")
    assert retried.status_code == 201 and not retried.has_header("Idempotent-Replayed")


def test_a_4xx_answer_is_replayed(api, carrier):
    first = upload(api, carrier, key="bad-desc", description="x" * 600)
    assert first.status_code == 400
    second = upload(api, carrier, key="bad-desc", description="x" * 600)
    assert second.status_code == 400 and second["Idempotent-Replayed"] == "true"
    assert second["Content-Type"] == "application/problem+json"


# --- listing, download, replace, delete ------------------------------------------------------


def test_list_by_client_id_or_dot(api, carrier, other_agency):
    ids = [upload(api, carrier, name=f"{n}.pdf").json()["id"] for n in range(3)]
    body = api.get(f"/v1/documents/clients?clientId={carrier.id}&limit=2").json()
    assert body["count"] == 3 and body["totalPages"] == 2
    assert [d["id"] for d in body["results"]] == ids[::-1][:2]
    assert api.get("/v1/documents/clients?dot=1234567").json()["count"] == 3
    rival = ClientFactory(agency=other_agency)
    assert api.get(f"/v1/documents/clients?clientId={rival.id}").json()["count"] == 0
    for query in ("", f"clientId={carrier.id}&dot=1234567", "dot=12x", "clientId=x"):
        assert_problem(api.get(f"/v1/documents/clients?{query}"), 400)


def test_list_policy_documents(api, policy):
    upload(api, policy, module="policies")
    assert api.get(f"/v1/documents/policies?policyId={policy.id}").json()["count"] == 1
    assert_problem(api.get("/v1/documents/policies"), 400)


def test_policy_documents_of_another_agency_and_bad_ids(api, other_agency, settings):
    rival_policy = PolicyFactory(client=ClientFactory(agency=other_agency))
    assert api.get(f"/v1/documents/policies?policyId={rival_policy.id}").json()["count"] == 0
    body = assert_problem(upload(api, rival_policy, module="policies"), 400)
    assert "policyId" in field_errors(body)
    assert not Document.objects.exists() and not stored_files(settings)
    for query in ("policyId=x", "policyId=0", "policyId=-1"):
        assert_problem(api.get(f"/v1/documents/policies?{query}"), 400)


def test_download_link_works_without_credentials(api, carrier):
    document = upload(api, carrier, content=PNG).json()
    link = api.get(f"/v1/documents/{document['id']}/client/download").json()
    assert set(link) == {"documentId", "downloadUrl", "expiresAtUtc"}
    response = APIClient().get(link["downloadUrl"])
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == PNG
    assert response["Content-Type"] == "image/png"
    assert "attachment" in response["Content-Disposition"]


def test_tampered_or_expired_link_is_403(api, carrier, monkeypatch, settings):
    url = upload(api, carrier).json()["downloadUrl"]
    anonymous = APIClient()
    assert_problem(anonymous.get(url[:-3] + ("aaa" if not url.endswith("aaa") else "bbb")), 403)
    real_time = time.time
    monkeypatch.setattr(
        "django.core.signing.time.time",
        lambda: real_time() + settings.DOCUMENT_URL_TTL_SECONDS + 5,
    )
    assert_problem(anonymous.get(url), 403)


def _at(instant: float):
    """The clock at `instant` (Unix seconds) as every reader of it sees it."""
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch("time.time", return_value=instant))
    stack.enter_context(
        mock.patch(
            "django.utils.timezone.now",
            return_value=dt.datetime.fromtimestamp(instant, tz=dt.UTC),
        )
    )
    return stack


def test_a_link_works_until_its_expires_at_utc_and_not_at_it(api, carrier):
    document = upload(api, carrier).json()
    # Signed at .7 past a second: the link lives from the whole second its signature carries.
    with _at(math.floor(time.time()) + 0.7):
        link = api.get(f"/v1/documents/{document['id']}/client/download").json()
    expires = dt.datetime.fromisoformat(link["expiresAtUtc"]).timestamp()
    anonymous = APIClient()
    with _at(expires - 0.5):
        response = anonymous.get(link["downloadUrl"])
        assert response.status_code == 200, response.content
        assert b"".join(response.streaming_content) == PDF
    for after in (0, 0.5):
        with _at(expires + after):
            body = assert_problem(anonymous.get(link["downloadUrl"]), 403)
            assert body["detail"] == "This download link has expired."


def test_link_of_a_document_deleted_since_is_404(api, carrier):
    document = upload(api, carrier).json()
    assert api.delete(f"/v1/documents/{document['id']}/client").status_code == 204
    assert_problem(APIClient().get(document["downloadUrl"]), 404)


def test_download_answers(api, other_api, carrier):
    document = upload(api, carrier).json()
    assert_problem(api.get(f"/v1/documents/{document['id']}/policy/download"), 404)
    assert_problem(other_api.get(f"/v1/documents/{document['id']}/client/download"), 404)
    api.delete(f"/v1/documents/{document['id']}/client")
    assert_problem(api.get(f"/v1/documents/{document['id']}/client/download"), 404)


def test_replace_keeps_the_id_and_the_previous_version(api, carrier):
    document = upload(api, carrier, content=PDF).json()
    old_url = document["downloadUrl"]
    new = api.put(
        f"/v1/documents/{document['id']}/client",
        {"file": SimpleUploadedFile("v2.png", PNG)},
        format="multipart",
    )
    assert new.status_code == 200
    body = new.json()
    assert body["id"] == document["id"]
    assert body["fileName"] == "v2.png" and body["contentType"] == "image/png"
    assert body["sha256"] == hashlib.sha256(PNG).hexdigest()
    [version] = DocumentVersion.objects.all()
    assert version.sha256 == hashlib.sha256(PDF).hexdigest()
    assert b"".join(APIClient().get(old_url).streaming_content) == PDF
    assert b"".join(APIClient().get(body["downloadUrl"]).streaming_content) == PNG


def test_replace_answers(api, other_api, carrier):
    document = upload(api, carrier).json()
    path = f"/v1/documents/{document['id']}"
    replacement = {"file": SimpleUploadedFile("v2.pdf", PDF)}
    assert_problem(api.put(f"{path}/policy", replacement, format="multipart"), 404)
    assert_problem(other_api.put(f"{path}/client", replacement, format="multipart"), 404)
    assert_problem(api.put(f"{path}/client", {}, format="multipart"), 400)
    api.delete(f"{path}/client")
    replacement = {"file": SimpleUploadedFile("v3.pdf", PDF)}
    assert_problem(api.put(f"{path}/client", replacement, format="multipart"), 422)


@pytest.mark.parametrize(
    "module, detail",
    [
        # A document goes with its owner: it answers as a deleted document.
        ("clients", "The document is deleted."),
        ("policies", "The document is deleted."),
    ],
)
def test_a_deleted_owner_takes_no_new_file(api, carrier, policy, module, detail):
    owner = carrier if module == "clients" else policy
    document = upload(api, owner, module=module).json()
    noun = "client" if module == "clients" else "policy"
    deleted = api.put(f"/v1/{module}/{owner.id}", {"deleted": True}, format="json")
    assert deleted.status_code == 200, deleted.content
    replacement = {"file": SimpleUploadedFile("v2.pdf", PDF)}
    refused = api.put(f"/v1/documents/{document['id']}/{noun}", replacement, format="multipart")
    assert assert_problem(refused, 422)["detail"] == detail
    assert Document.objects.get().file_name == "coi.pdf"
    assert not DocumentVersion.objects.exists()


def test_delete_removes_files_and_a_second_delete_is_422(
    api, carrier, settings, django_capture_on_commit_callbacks
):
    document = upload(api, carrier).json()
    api.put(
        f"/v1/documents/{document['id']}/client",
        {"file": SimpleUploadedFile("v2.pdf", PNG)},
        format="multipart",
    )
    assert len(stored_files(settings)) == 2
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/v1/documents/{document['id']}/client").status_code == 204
    assert stored_files(settings) == []
    assert Document.objects.get().deleted is True
    assert_problem(api.delete(f"/v1/documents/{document['id']}/client"), 422)
    assert api.get(f"/v1/documents/clients?clientId={carrier.id}").json()["count"] == 0


def test_delete_through_the_wrong_module_or_agency_is_404(api, other_api, policy):
    document = upload(api, policy, module="policies").json()
    assert_problem(api.delete(f"/v1/documents/{document['id']}/client"), 404)
    assert_problem(other_api.delete(f"/v1/documents/{document['id']}/policy"), 404)
    assert Document.objects.get().deleted is False


# --- permissions -----------------------------------------------------------------------------


def _user_with(agency, *codenames):
    user = UserFactory(agencies=[agency])
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="documents", codename__in=codenames)
    )
    return user


def test_viewer_may_list_and_download_but_not_write(api, viewer_api, carrier):
    document = upload(api, carrier).json()
    assert viewer_api.get(f"/v1/documents/clients?clientId={carrier.id}").status_code == 200
    assert viewer_api.get(f"/v1/documents/{document['id']}/client/download").status_code == 200
    assert_problem(upload(viewer_api, carrier), 403)
    assert_problem(viewer_api.delete(f"/v1/documents/{document['id']}/client"), 403)
    assert_problem(
        viewer_api.put(
            f"/v1/documents/{document['id']}/client",
            {"file": SimpleUploadedFile("x.pdf", PDF)},
            format="multipart",
        ),
        403,
    )


def test_permissions_are_per_module_and_action(api, make_api, agency, carrier, policy):
    client_doc = upload(api, carrier).json()
    policy_doc = upload(api, policy, module="policies").json()
    client_only = make_api(_user_with(agency, "view_client_documents", "edit_client_documents"))
    assert upload(client_only, carrier).status_code == 201
    assert_problem(upload(client_only, policy, module="policies"), 403)
    assert_problem(client_only.get(f"/v1/documents/policies?policyId={policy.id}"), 403)
    assert_problem(client_only.delete(f"/v1/documents/{client_doc['id']}/client"), 403)
    deleter = make_api(_user_with(agency, "delete_policy_documents"))
    assert_problem(deleter.delete(f"/v1/documents/{client_doc['id']}/client"), 403)
    assert deleter.delete(f"/v1/documents/{policy_doc['id']}/policy").status_code == 204


def test_admin_lists_documents_under_the_client_and_lets_staff_download(
    client, api, carrier, groups, agency
):
    document = upload(api, carrier, content=PNG, name="scan.png").json()
    staff = UserFactory(username="staff", agencies=[agency], groups=[groups[0]])
    staff.is_staff = True
    staff.save()
    client.force_login(staff)
    page = client.get(f"/admin/clients/client/{carrier.pk}/change/").content.decode()
    assert "scan.png" in page
    response = client.get(f"/admin/documents/document/{document['id']}/download/")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == PNG


def test_a_deleted_clients_policy_takes_no_new_file_either(api, carrier, policy):
    # The policy stays live when its client is deleted (its documents stay listed), but takes no
    # new file.
    document = upload(api, policy, module="policies").json()
    deleted = api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json")
    assert deleted.status_code == 200, deleted.content
    replacement = {"file": SimpleUploadedFile("v2.pdf", PDF)}
    refused = api.put(f"/v1/documents/{document['id']}/policy", replacement, format="multipart")
    assert assert_problem(refused, 422)["detail"] == "The document's client is deleted."
    new = {"file": SimpleUploadedFile("new.pdf", PDF), "policyId": policy.id}
    body = assert_problem(api.post("/v1/documents/policies", new, format="multipart"), 400)
    assert [e["field"] for e in body["errors"]] == ["policyId"]
    assert Document.objects.get().file_name == "coi.pdf"
    assert not DocumentVersion.objects.exists()


def test_a_file_part_named_in_capitals_is_hashed_as_the_parser_reads_it(api, carrier):
    # The parser reads `FILE` as `file`; its SHA-256 was kept under the name as sent, so the
    # upload failed on an internal field and a replacement stored a blank digest.
    data = {"FILE": SimpleUploadedFile("coi.pdf", PDF), "clientId": carrier.id}
    created = api.post("/v1/documents/clients", data, format="multipart")
    assert created.status_code == 201, created.content
    assert created.json()["sha256"] == hashlib.sha256(PDF).hexdigest()
    replacement = {"FILE": SimpleUploadedFile("v2.png", PNG)}
    replaced = api.put(
        f"/v1/documents/{created.json()['id']}/client", replacement, format="multipart"
    )
    assert replaced.status_code == 200, replaced.content
    assert replaced.json()["sha256"] == hashlib.sha256(PNG).hexdigest()
