"""The "By client" list filter of the vehicles, drivers, policies and documents is a search box
served by the admin's autocomplete (issue 18): an agency's 20,000 clients listed in the sidebar
cost a vehicle list 0.55 of its 0.7 s and 2 MB of page. Only the chosen client is read, scoped
to the staff member's agencies."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory

from apps.core.admin_display import AutocompleteFilter
from apps.documents.models import Document
from apps.vehicles.models import Vehicle
from tests.conftest import staff_member
from tests.factories import ClientFactory, DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db


def _document(*, client, file_name):
    return Document.objects.create(
        module="client",
        client=client,
        file_name=file_name,
        storage_name=f"documents/x/{file_name}",
        content_type="application/pdf",
        size=1,
        sha256="0" * 64,
    )


LISTS = {
    "vehicles/vehicle": ("vehicles", "vehicle", VehicleFactory, "unit"),
    "drivers/driver": ("drivers", "driver", DriverFactory, "last_name"),
    "policies/policy": ("policies", "policy", PolicyFactory, "policy_number"),
    "documents/document": ("documents", "document", _document, "file_name"),
}


@pytest.fixture
def world(groups, agency, other_agency):
    staff = staff_member([agency], groups, "filterer")
    mine = [
        ClientFactory(agency=agency, client_name=f"Harbor Freight {n}", dot=str(4_000_000 + n))
        for n in range(3)
    ]
    rival = ClientFactory(agency=other_agency, client_name="Harbor Rival Lines", dot="4999999")
    return staff, mine, rival


def _records(factory, label_field, clients):
    """One record of each client, with a label that names the client's position."""
    return [factory(client=c, **{label_field: f"REC-{n}-MARK"}) for n, c in enumerate(clients)]


def _filter_block(body: str) -> str:
    return body.split('data-filter-title="client"')[1].split("</details>")[0]


@pytest.mark.parametrize("path", LISTS)
def test_the_client_filter_is_a_search_box_that_lists_no_client(client, world, path):
    staff, mine, _rival = world
    app_label, model_name, _factory, _label = LISTS[path]
    client.force_login(staff)
    body = client.get(f"/admin/{path}/").content.decode()
    block = _filter_block(body)
    assert 'class="bo-autocomplete-filter admin-autocomplete"' in block
    assert f'data-app-label="{app_label}"' in block and f'data-model-name="{model_name}"' in block
    assert (
        'data-field-name="client"' in block
        and 'data-ajax--url="/admin/autocomplete/?box=list-filter"' in block
    )
    assert "Harbor" not in block  # no client listed: the box finds them
    # The autocomplete's scripts, in the order Django's widget needs (select2 before the
    # admin's jQuery is taken off the page's globals), and the filter's own.
    scripts = [
        "admin/js/vendor/select2/select2.full",
        "admin/js/jquery.init.js",
        "admin/js/autocomplete.js",
        "backoffice/autocomplete_filter.js",
    ]
    positions = [body.index(script) for script in scripts]
    assert positions == sorted(positions)
    assert body.index("admin/js/vendor/jquery/jquery") < positions[0]


@pytest.mark.parametrize("path", LISTS)
def test_a_chosen_client_is_shown_by_name_and_filters_the_list(client, world, path):
    staff, mine, _rival = world
    _app, _model, factory, label = LISTS[path]
    _records(factory, label, mine)
    client.force_login(staff)
    body = client.get(f"/admin/{path}/", {"client__id__exact": mine[1].pk}).content.decode()
    block = _filter_block(body)
    assert f'<option value="{mine[1].pk}" selected>Harbor Freight 1' in block
    assert "Harbor Freight 0" not in block and "Harbor Freight 2" not in block
    assert "REC-1-MARK" in body
    assert "REC-0-MARK" not in body and "REC-2-MARK" not in body
    # "All" is the list without the filter: the page keeps it for the box's clear button.
    assert 'data-all="?"' in block


@pytest.mark.parametrize("path", LISTS)
def test_another_agencys_client_in_the_url_shows_no_name_and_no_record(client, world, path):
    staff, mine, rival = world
    _app, _model, factory, label = LISTS[path]
    _records(factory, label, [*mine, rival])
    client.force_login(staff)
    response = client.get(f"/admin/{path}/", {"client__id__exact": rival.pk})
    assert response.status_code == 200
    body = response.content.decode()
    assert "Harbor Rival Lines" not in body
    assert "REC-3-MARK" not in body and "REC-0-MARK" not in body


def test_a_client_id_that_is_not_a_number_is_refused_as_a_bad_filter(client, world):
    staff, _mine, _rival = world
    client.force_login(staff)
    response = client.get("/admin/vehicles/vehicle/", {"client__id__exact": "1; drop"})
    # Django's changelist answers a lookup it cannot use by sending the staff member back to
    # the unfiltered list (`?e=1`), never a server error.
    assert response.status_code == 302 and response["Location"].endswith("?e=1")


@pytest.mark.parametrize("path", LISTS)
def test_the_box_finds_the_staff_members_clients_only(client, world, path):
    staff, mine, rival = world
    app_label, model_name, _factory, _label = LISTS[path]
    client.force_login(staff)
    answer = client.get(
        "/admin/autocomplete/",
        {
            "term": "harbor",
            "app_label": app_label,
            "model_name": model_name,
            "field_name": "client",
        },
    )
    assert answer.status_code == 200
    found = {row["id"] for row in answer.json()["results"]}
    assert found == {str(c.pk) for c in mine}
    assert str(rival.pk) not in found
    by_dot = client.get(
        "/admin/autocomplete/",
        {
            "term": "4000002",
            "app_label": app_label,
            "model_name": model_name,
            "field_name": "client",
        },
    ).json()["results"]
    assert [row["id"] for row in by_dot] == [str(mine[2].pk)]


def test_the_page_reads_no_list_of_clients_whatever_their_number(client, world):
    # Without a choice the filter reads no client (the rows' own clients come joined to
    # them): the page runs the same statements with 3 clients as with 40.
    staff, _mine, _rival = world
    client.force_login(staff)
    client.get("/admin/vehicles/vehicle/")
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as few:
        client.get("/admin/vehicles/vehicle/")
    ClientFactory.create_batch(37, agency=staff.agency_memberships.first().agency)
    with CaptureQueriesContext(connection) as many:
        body = client.get("/admin/vehicles/vehicle/").content.decode()
    assert len(many) == len(few)
    assert not any('FROM "clients_client"' in q["sql"] for q in many.captured_queries)
    assert "Harbor" not in _filter_block(body)


def test_an_admin_without_the_scripts_is_refused(world):
    staff, _mine, _rival = world
    request = RequestFactory().get("/admin/vehicles/vehicle/")
    request.user = staff
    plain = admin.ModelAdmin(Vehicle, admin.site)
    with pytest.raises(ImproperlyConfigured, match="AutocompleteFilterMedia"):
        AutocompleteFilter(
            Vehicle._meta.get_field("client"), request, {}, Vehicle, plain, field_path="client"
        )
