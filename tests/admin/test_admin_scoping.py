"""Staff who are not superusers see and edit only their agencies' records in the admin."""

from __future__ import annotations

import pytest

from apps.agencies.models import AgencyMembership
from tests.factories import ClientFactory, UserFactory

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
