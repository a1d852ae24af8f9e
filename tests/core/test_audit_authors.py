"""The audit trail's authors: a command acting as a user records it, as a request does; the
admin's history shows a blank value as blank."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from apps.clients.models import Client
from apps.demo.seed import DEMO_API_KEY, DEMO_PASSWORD
from apps.documents.models import Document
from apps.drivers.models import Driver
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle
from tests.conftest import staff_member

pytestmark = pytest.mark.django_db


def demo_api(username: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_APIKEY=DEMO_API_KEY)
    access = client.post(
        "/v1/auth/token", {"username": username, "password": DEMO_PASSWORD}, format="json"
    ).json()["access"]
    client.credentials(HTTP_APIKEY=DEMO_API_KEY, HTTP_AUTHORIZATION=f"Bearer {access}")
    return client


def test_seeded_records_name_their_author_in_the_audit_trail_as_in_created_by():
    call_command("seed_demo", "--force", stdout=StringIO())
    vehicle = Vehicle.objects.order_by("pk").first()
    audit = demo_api("demo-admin").get(f"/v1/vehicles/{vehicle.pk}").json()["audit"]
    assert audit["createdBy"] == "admin"
    assert [(c["type"], c["by"]) for c in audit["changes"]][-1] == ("created", "admin")
    for model in (Client, Policy, Vehicle, Driver, Document):
        authors = set(model.history.values_list("history_user__username", flat=True))
        assert authors == {"admin"}, model


def test_a_blank_value_in_the_admin_history_reads_as_blank(client, api, carrier, groups, agency):
    upload = {"file": SimpleUploadedFile("coi.pdf", b"%PDF-1.4 x"), "clientId": carrier.id}
    document = api.post("/v1/documents/clients", upload, format="multipart").json()
    assert api.delete(f"/v1/documents/{document['id']}/client").status_code == 204
    client.force_login(staff_member([agency], groups))
    page = client.get(f"/admin/documents/document/{document['id']}/history/").content.decode()
    assert "Deleted by" in page and "manager" in page  # the change is shown
    assert "pk=None" not in page and "Deleted user" not in page


def test_a_blank_change_reason_in_the_admin_history_reads_as_blank(
    client, api, carrier, groups, agency
):
    assert (
        api.put(f"/v1/clients/{carrier.id}", {"phone": "555-0199"}, format="json").status_code
        == 200
    )
    client.force_login(staff_member([agency], groups))
    page = client.get(f"/admin/clients/client/{carrier.id}/history/").content.decode()
    table = page[page.index('id="change-history"') :]
    cells = [cell.strip() for cell in table.split("<td>")[1:]]
    assert cells and not any(cell.startswith("None") for cell in cells), cells
