"""Two identical uploads with one Idempotency-Key at the same moment: one document, one 409.

Runs on PostgreSQL (CI's second pass), where each thread has its own connection and the
database arbitrates, as between two server processes. SQLite serialises writers instead.
"""

from __future__ import annotations

import threading
import time

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from apps.documents import services
from apps.documents.models import Document
from tests.conftest import CONCURRENT_WRITERS
from tests.factories import ClientFactory

pytestmark = CONCURRENT_WRITERS


def test_simultaneous_twins_store_one_document(
    make_api, manager, agency, monkeypatch, master_data_back
):
    client = ClientFactory(agency=agency)
    real_upload = services.document_upload
    barrier = threading.Barrier(2)

    def slow_upload(**kwargs):
        time.sleep(0.5)  # the first request is still running when its twin arrives
        return real_upload(**kwargs)

    monkeypatch.setattr("apps.documents.api.views.document_upload", slow_upload)
    results: list[int] = []

    def post():
        api = make_api(manager)
        barrier.wait()
        response = api.post(
            "/v1/documents/clients",
            {"file": SimpleUploadedFile("coi.pdf", b"%PDF-1.4 twin"), "clientId": client.id},
            format="multipart",
            HTTP_IDEMPOTENCY_KEY="twin-key",
        )
        results.append(response.status_code)
        connection.close()

    threads = [threading.Thread(target=post) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(results) == [201, 409]
    assert Document.objects.count() == 1
