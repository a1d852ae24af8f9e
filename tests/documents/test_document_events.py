"""A document's events carry the document as the API lists it (contract section 14: "the changed
record as the API shows it"), without its download link (a signed link of minutes: an event is
kept for 30 days and pushed to receivers), and with whether it is deleted."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.documents.test_api import PDF, PNG, upload

pytestmark = pytest.mark.django_db

LINK_FIELDS = {"downloadUrl", "expiresAtUtc"}


def _events(api, kind: str) -> list[dict]:
    response = api.get(f"/v1/events?type=document.{kind}")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def _listed(api, carrier) -> dict:
    rows = api.get(f"/v1/documents/clients?clientId={carrier.id}").json()["results"]
    assert len(rows) == 1
    return {key: value for key, value in rows[0].items() if key not in LINK_FIELDS}


def test_each_document_event_carries_the_document_as_listed(api, carrier, manager):
    created = upload(api, carrier, content=PDF, name="coi.pdf", description="COI")
    assert created.status_code == 201, created.content
    document = created.json()
    [uploaded] = _events(api, "uploaded")
    assert uploaded["data"] == {**_listed(api, carrier), "deleted": False}
    assert uploaded["data"]["uploadedBy"] == manager.username
    assert uploaded["data"]["uploadedAt"] == document["uploadedAt"]
    assert not LINK_FIELDS & uploaded["data"].keys()

    replaced = api.put(
        f"/v1/documents/{document['id']}/client",
        {"file": SimpleUploadedFile("coi-v2.png", PNG, content_type="image/png")},
        format="multipart",
    )
    assert replaced.status_code == 200, replaced.content
    [event] = _events(api, "replaced")
    assert event["data"] == {**_listed(api, carrier), "deleted": False}
    assert event["data"]["fileName"] == "coi-v2.png"

    listed = _listed(api, carrier)
    assert api.delete(f"/v1/documents/{document['id']}/client").status_code == 204
    [deleted] = _events(api, "deleted")
    assert deleted["data"] == {**listed, "deleted": True}


def test_the_uploader_is_named_to_its_agency_and_the_event_shown_to_it_alone(
    api, other_api, carrier, manager
):
    created = upload(api, carrier)
    assert created.status_code == 201, created.content
    [uploaded] = _events(api, "uploaded")
    assert uploaded["data"]["uploadedBy"] == manager.username
    assert _events(other_api, "uploaded") == []  # nor shown to the other agency at all
