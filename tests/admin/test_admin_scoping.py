"""Staff who are not superusers see and edit only their agencies' records in the admin."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.agencies.models import AgencyMembership
from apps.clients.models import Client
from apps.clients.services import client_create
from tests.admin.formdata import form_data
from tests.conftest import staff_member
from tests.factories import (
    ClientFactory,
    DriverFactory,
    LienholderFactory,
    ProducerFactory,
    UserFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


def test_staff_lists_only_their_agencys_clients(client, staff, agency, other_agency):
    mine = ClientFactory(agency=agency, client_name="Mine Trucking")
    theirs = ClientFactory(agency=other_agency, client_name="Theirs Trucking")
    client.force_login(staff)
    page = client.get("/admin/clients/client/")
    assert page.status_code == 200
    assert mine.client_name in page.content.decode()
    assert theirs.client_name not in page.content.decode()
    assert client.get(f"/admin/clients/client/{theirs.pk}/change/").status_code == 302
    assert client.get(f"/admin/clients/client/{mine.pk}/change/").status_code == 200


def test_staff_search_by_dot(client, staff, agency):
    ClientFactory(agency=agency, client_name="Dot Match", dot="4445556")
    ClientFactory(agency=agency, client_name="Other One", dot="1112223")
    client.force_login(staff)
    page = client.get("/admin/clients/client/?q=4445556").content.decode()
    assert "Dot Match" in page and "Other One" not in page


def test_agency_choices_on_the_client_form_are_scoped(client, staff, agency, other_agency):
    client.force_login(staff)
    form = client.get("/admin/clients/client/add/").content.decode()
    assert agency.name in form
    assert other_agency.name not in form


def test_superuser_sees_every_agency(client, agency, other_agency):
    admin = UserFactory(username="root")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    ClientFactory(agency=other_agency, client_name="Theirs Trucking")
    client.force_login(admin)
    assert "Theirs Trucking" in client.get("/admin/clients/client/").content.decode()


def test_membership_admin_is_scoped(client, staff, other_agency):
    outsider = UserFactory(username="outsider")
    AgencyMembership.objects.create(user=outsider, agency=other_agency)
    client.force_login(staff)
    assert "outsider" not in client.get("/admin/agencies/agencymembership/").content.decode()


def _changed_in_the_admin(client, record) -> None:
    url = f"/admin/clients/client/{record.pk}/change/"
    response = client.post(url, form_data(client.get(url).content.decode(), phone="555-0100"))
    assert response.status_code == 302


def _recent_actions(client) -> str:
    page = client.get("/admin/").content.decode()
    return page[page.index('id="recent-actions-module"') :]


def test_recent_actions_name_only_records_the_staff_member_still_sees(
    client, groups, agency, other_agency
):
    staff = staff_member([agency, other_agency], groups, "both")
    client.force_login(staff)
    gulf = ClientFactory(agency=other_agency, client_name="Gulf Coast Logistics", dot="3456789")
    moved = ClientFactory(agency=agency, client_name="Moving Freight")
    kept = ClientFactory(agency=agency, client_name="Kept Haulers")
    for record in (gulf, moved, kept):
        _changed_in_the_admin(client, record)
    assert "Gulf Coast Logistics" in _recent_actions(client)

    AgencyMembership.objects.filter(user=staff, agency=other_agency).delete()
    Client.objects.filter(pk=moved.pk).update(agency=other_agency)
    panel = _recent_actions(client)
    assert "Gulf Coast Logistics" not in panel and "3456789" not in panel
    assert "Moving Freight" not in panel
    assert f'href="/admin/clients/client/{kept.pk}/change/">Kept Haulers' in panel
    assert panel.count("A record you no longer see") == 2


def test_recent_actions_check_each_kind_of_record_once(client, staff, agency):
    client.force_login(staff)
    carriers = [ClientFactory(agency=agency, client_name=f"Carrier {n}") for n in range(10)]
    _changed_in_the_admin(client, carriers[0])
    _recent_actions(client)  # the dashboard's counts, kept until a write
    with CaptureQueriesContext(connection) as one:
        _recent_actions(client)
    for carrier in carriers[1:]:
        _changed_in_the_admin(client, carrier)
    _recent_actions(client)
    with CaptureQueriesContext(connection) as ten:
        panel = _recent_actions(client)
    assert panel.count("Carrier ") == 10
    assert len(ten.captured_queries) == len(one.captured_queries)


AGENCY_FILTERS = [
    ("clients/client", "agency__id__exact"),
    ("vehicles/vehicle", "client__agency__id__exact"),
    ("drivers/driver", "client__agency__id__exact"),
    ("vehicles/lienholder", "agency__id__exact"),
    ("compliance/requirementprofile", "agency__id__exact"),
    ("agencies/producer", "agency__id__exact"),
    ("agencies/agencymembership", "agency__id__exact"),
    ("events/event", "agency__id__exact"),
]


@pytest.mark.parametrize(("path", "lookup"), AGENCY_FILTERS)
def test_a_list_filtered_by_an_agency_the_staff_member_does_not_serve_is_empty(
    client, staff, agency, other_agency, path, lookup
):
    # One agency to choose: Django dropped the filter and listed all of the staff member's own.
    carrier = client_create(user=staff, agency_id=agency.pk, client_name="Own Freight")
    VehicleFactory(client=carrier)
    DriverFactory(client=carrier)
    LienholderFactory(agency=agency)
    ProducerFactory(agency=agency)
    client.force_login(staff)
    url = f"/admin/{path}/"
    assert client.get(url).context["cl"].result_count > 0
    for value in (other_agency.pk, 999, agency.pk):
        response = client.get(url, {lookup: value})
        assert response.status_code == 200, (url, value)
        if value == agency.pk:
            assert response.context["cl"].result_count > 0
            continue
        assert response.context["cl"].result_count == 0, (url, value)
        assert "None of yours" in response.content.decode()  # the filter says it is on
