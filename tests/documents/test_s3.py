"""The S3 path for real, over HTTP, against local S3-compatible servers the tests start.

moto in server mode proves the upload, pre-signed download and delete round trip; s3rver
(npm, SigV4) also refuses an expired pre-signed URL, so the expiry test runs against it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import boto3
import httpx
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.documents.models import Document
from tests.factories import ClientFactory
from tests.processes import free_port, stop, wait_for_port

pytestmark = pytest.mark.django_db
BUCKET = "documents"
PDF = b"%PDF-1.4\n%s3 round trip\n"
S3RVER_DIR = Path(__file__).resolve().parents[2] / ".cache" / "s3rver"


@pytest.fixture(scope="module")
def moto_endpoint():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        endpoint = f"http://127.0.0.1:{port}"
        boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        ).create_bucket(Bucket=BUCKET)
        yield endpoint, "test", "test"
    finally:
        stop(process)


def _s3rver_binary() -> Path | None:
    binary = S3RVER_DIR / "node_modules" / ".bin" / "s3rver"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        return None
    S3RVER_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--silent",
            "--prefix",
            str(S3RVER_DIR),
            "s3rver@3.7.1",
        ],
        check=True,
        timeout=600,
    )
    return binary


@pytest.fixture(scope="module")
def s3rver_endpoint(tmp_path_factory):
    binary = _s3rver_binary()
    if binary is None or shutil.which("node") is None:
        pytest.skip("node and npm are needed for s3rver")
    port = free_port()
    data = tmp_path_factory.mktemp("s3rver")
    process = subprocess.Popen(
        [
            "node",
            str(binary),
            "-d",
            str(data),
            "-a",
            "127.0.0.1",
            "-p",
            str(port),
            "-s",
            "--configure-bucket",
            BUCKET,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}", "S3RVER", "S3RVER"
    finally:
        stop(process)


def _use_s3(settings, endpoint, access, secret, ttl=900):
    settings.DOCUMENTS_STORAGE = "s3"
    settings.DOCUMENT_URL_TTL_SECONDS = ttl
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": BUCKET,
                "endpoint_url": endpoint,
                "region_name": "us-east-1",
                "access_key": access,
                "secret_key": secret,
                "querystring_expire": ttl,
                "file_overwrite": False,
                "signature_version": "s3v4",
            },
        },
    }
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=access,
        aws_secret_access_key=secret,
    )


def _fetch(url: str) -> tuple[int, bytes]:
    response = httpx.get(url, timeout=10)
    return response.status_code, response.content


def _upload(api, client):
    return api.post(
        "/v1/documents/clients",
        {"file": SimpleUploadedFile("coi.pdf", PDF), "clientId": client.id},
        format="multipart",
    )


def test_upload_presigned_download_and_delete_round_trip(
    api, agency, settings, moto_endpoint, django_capture_on_commit_callbacks
):
    s3 = _use_s3(settings, *moto_endpoint)
    client = ClientFactory(agency=agency)
    response = _upload(api, client)
    assert response.status_code == 201, response.content
    document = Document.objects.get()
    stored = s3.get_object(Bucket=BUCKET, Key=document.storage_name)["Body"].read()
    assert stored == PDF

    link = api.get(f"/v1/documents/{document.pk}/client/download").json()
    assert link["downloadUrl"].startswith(moto_endpoint[0])
    assert "X-Amz-Signature" in link["downloadUrl"]
    assert _fetch(link["downloadUrl"]) == (200, PDF)

    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/v1/documents/{document.pk}/client").status_code == 204
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=document.storage_name)
    assert listed.get("KeyCount", 0) == 0


def test_the_object_is_stored_as_the_type_its_bytes_say(api, agency, settings, moto_endpoint):
    # The declared type is the client's to choose: text declared as text/html would be an HTML
    # object in the bucket, served as such to anyone holding its link.
    s3 = _use_s3(settings, *moto_endpoint)
    client = ClientFactory(agency=agency)
    text = b"unit,notes\n101,<script>alert(1)</script>\n"
    response = api.post(
        "/v1/documents/clients",
        {"file": SimpleUploadedFile("notes.csv", text, "text/html"), "clientId": client.id},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    document = Document.objects.get()
    stored = s3.head_object(Bucket=BUCKET, Key=document.storage_name)
    assert stored["ContentType"] == document.content_type == "text/csv"


def test_expired_presigned_url_is_refused(api, agency, settings, s3rver_endpoint):
    # Five seconds: a loaded CI box can take more than one between signing and the first fetch.
    _use_s3(settings, *s3rver_endpoint, ttl=5)
    client = ClientFactory(agency=agency)
    assert _upload(api, client).status_code == 201
    document = Document.objects.get()
    signed_at = time.monotonic()
    url = api.get(f"/v1/documents/{document.pk}/client/download").json()["downloadUrl"]
    assert _fetch(url) == (200, PDF)
    time.sleep(max(0.0, signed_at + 6.5 - time.monotonic()))
    status, _ = _fetch(url)
    assert status == 403


@pytest.mark.parametrize("name", ["é" * 127 + ".txt", "文" * 200], ids=["e-acute", "cjk"])
def test_a_long_non_ascii_name_downloads_under_its_name(api, agency, settings, moto_endpoint, name):
    # The pre-signed URL names the file for S3's Content-Disposition: RFC 6266's
    # `filename*=utf-8''…` for a name past ASCII, never raw UTF-8 in a header.
    _use_s3(settings, *moto_endpoint)
    client = ClientFactory(agency=agency)
    response = api.post(
        "/v1/documents/clients",
        {
            "file": SimpleUploadedFile(name, b"unit,vin\n101,1FUJGLDR7CLBP8834\n"),
            "clientId": client.id,
        },
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json()["fileName"] == name
    assert len(Path(Document.objects.get().storage_name).name.encode()) <= 255
    link = api.get(f"/v1/documents/{response.json()['id']}/client/download").json()
    fetched = httpx.get(link["downloadUrl"], timeout=10)
    assert fetched.status_code == 200
    disposition = fetched.headers["Content-Disposition"]
    assert disposition.isascii() and disposition.startswith("attachment; filename*=utf-8''")
    assert urllib.parse.unquote(disposition.split("''", 1)[1]) == name
