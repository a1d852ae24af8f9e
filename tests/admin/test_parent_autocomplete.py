"""The client form's parent box (the admin's autocomplete for `parent_client`) offers what a
save accepts: live clients of the staff member's agencies. A deleted client was offered, and
saving it as the parent was refused (the service names a parent as any write names a client)."""

from __future__ import annotations

import pytest

from apps.clients.models import Client
from tests.admin.formdata import form_data
from tests.conftest import staff_member
from tests.factories import ClientFactory

pytestmark = pytest.mark.django_db
URL = "/admin/autocomplete/"


def offered(staff, field_name: str, term: str = "Haul") -> list[str]:
    params = {"term": term, "app_label": "clients", "model_name": "client"}
    response = staff.get(URL, {**params, "field_name": field_name})
    assert response.status_code == 200, response.content
    return sorted(row["text"] for row in response.json()["results"])


@pytest.fixture
def world(client, groups, agency, other_agency):
    client.force_login(staff_member([agency], groups, "parenting"))
    ClientFactory(agency=agency, client_name="Alpha Haul", dot="5100001")
    ClientFactory(agency=agency, client_name="Beta Haul", dot="5100002", deleted=True)
    ClientFactory(agency=other_agency, client_name="Rival Haul", dot="5100003")
    return client


def test_the_parent_box_offers_live_clients_of_the_staff_members_agencies_only(world):
    assert offered(world, "parent_client") == ["Alpha Haul (DOT 5100001)"]


def test_a_deleted_client_offered_would_be_refused_on_save(world, agency):
    """Why: the form refuses a deleted parent (the box offered it, the save said no)."""
    child = ClientFactory(agency=agency, client_name="Child Haul", dot="5100004")
    deleted = Client.objects.get(client_name="Beta Haul")
    page = world.get(f"/admin/clients/client/{child.pk}/change/")
    assert page.status_code == 200
    data = form_data(page.content.decode(), parent_client=deleted.pk)
    response = world.post(f"/admin/clients/client/{child.pk}/change/", data)
    assert response.status_code == 200  # the form again, with the refusal
    child.refresh_from_db()
    assert child.parent_client_id is None
