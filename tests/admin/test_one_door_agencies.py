"""Issue 14: agencies, producers, memberships and lienholders are written in the admin
through their services; a rule only the service knows shows on the form."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from apps.agencies.models import Agency, AgencyMembership, Producer
from apps.events.models import Event
from apps.vehicles.models import Lienholder, Vehicle
from tests.admin.formdata import form_data
from tests.factories import (
    ClientFactory,
    LienholderFactory,
    PolicyFactory,
    ProducerFactory,
    UserFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_agency_staff(client, groups, agency, other_agency):
    """Agency manager of both agencies, with the permissions of the agency pages too."""
    user = UserFactory(username="two-agency-staff", agencies=[agency, other_agency])
    user.groups.set([groups[0]])
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="agencies",
            codename__in=["add_agency", "change_producer", "add_agencymembership"],
        )
    )
    user.is_staff = True
    user.save()
    client.force_login(user)
    client.user = user
    return client


def _change(staff_client, obj, **overrides):
    url = f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/{obj.pk}/change/"
    data = form_data(staff_client.get(url).content.decode(), **overrides)
    return staff_client.post(url, data)


def test_lienholder_form_refuses_moving_it_to_another_agency(
    two_agency_staff, agency, other_agency
):
    bank = LienholderFactory(agency=agency, name="First Bank")
    response = _change(two_agency_staff, bank, agency=other_agency.pk)
    assert response.status_code == 200
    assert "A lienholder cannot move to another agency." in response.content.decode()
    assert Lienholder.objects.get(pk=bank.pk).agency_id == agency.pk


def test_lienholder_added_in_the_admin_goes_through_the_service(two_agency_staff, agency):
    page = two_agency_staff.get("/admin/vehicles/lienholder/add/").content.decode()
    data = form_data(page, agency=agency.pk, name="Admin Bank", phone="555-0101")
    response = two_agency_staff.post("/admin/vehicles/lienholder/add/", data)
    assert response.status_code == 302
    assert Lienholder.objects.filter(agency=agency, name="Admin Bank", phone="555-0101").exists()


def test_lienholder_deleted_in_the_admin_releases_its_vehicles_through_the_service(
    two_agency_staff, agency
):
    carrier = ClientFactory(agency=agency)
    bank = LienholderFactory(agency=agency)
    truck = VehicleFactory(client=carrier, lienholder=bank)
    url = f"/admin/vehicles/lienholder/{bank.pk}/delete/"
    assert two_agency_staff.post(url, {"post": "yes"}).status_code == 302
    assert not Lienholder.objects.filter(pk=bank.pk).exists()
    assert Vehicle.objects.get(pk=truck.pk).lienholder_id is None
    assert Event.objects.filter(type="vehicle.updated", client_id=carrier.pk).count() == 1


def test_agency_add_form_refuses_staff_who_are_not_superusers(two_agency_staff):
    page = two_agency_staff.get("/admin/agencies/agency/add/").content.decode()
    data = form_data(page, name="Side Agency")
    response = two_agency_staff.post("/admin/agencies/agency/add/", data)
    assert response.status_code == 200
    assert "Only a superuser creates agencies." in response.content.decode()
    assert not Agency.objects.filter(name="Side Agency").exists()


def test_producer_form_refuses_moving_it_to_another_agency(two_agency_staff, agency, other_agency):
    producer = ProducerFactory(agency=agency, name="Pat Agent")
    response = _change(two_agency_staff, producer, agency=other_agency.pk, phone="555-0199")
    assert response.status_code == 200
    assert "A producer cannot move to another agency." in response.content.decode()
    producer.refresh_from_db()
    assert (producer.agency_id, producer.phone) == (agency.pk, "")


def test_producer_form_saves_only_through_the_service(two_agency_staff, agency):
    producer = ProducerFactory(agency=agency, name="Pat Agent")
    response = _change(two_agency_staff, producer, phone="555-0199")
    assert response.status_code == 302
    assert Producer.objects.get(pk=producer.pk).phone == "555-0199"


def test_membership_added_in_the_admin_goes_through_the_service(two_agency_staff, agency):
    newcomer = UserFactory(username="newcomer")
    page = two_agency_staff.get("/admin/agencies/agencymembership/add/").content.decode()
    data = form_data(page, user=newcomer.pk, agency=agency.pk)
    response = two_agency_staff.post("/admin/agencies/agencymembership/add/", data)
    assert response.status_code == 302
    assert AgencyMembership.objects.filter(user=newcomer, agency=agency).exists()


def test_a_membership_is_not_edited_in_place(two_agency_staff, agency, other_agency):
    newcomer = UserFactory(username="newcomer", agencies=[agency])
    membership = AgencyMembership.objects.get(user=newcomer)
    url = f"/admin/agencies/agencymembership/{membership.pk}/change/"
    response = two_agency_staff.post(url, {"user": newcomer.pk, "agency": other_agency.pk})
    assert response.status_code == 403
    assert AgencyMembership.objects.get(pk=membership.pk).agency_id == agency.pk


@pytest.fixture
def producer_staff(client, groups, agency):
    """A manager of the agency who may also delete its producers in the admin."""
    user = UserFactory(username="producer-staff", agencies=[agency], groups=[groups[0]])
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="agencies", codename__in=["view_producer", "delete_producer"]
        )
    )
    user.is_staff = True
    user.save()
    client.force_login(user)
    client.user = user
    return client


def test_producer_deleted_in_the_admin_is_cleared_from_its_clients_and_policies_with_audit(
    producer_staff, api, agency
):
    """The clients and policies that named the producer keep none, each as its update would
    leave it: a history version by the staff member, the record stamped, and its
    `client.updated` / `policy.updated` in the feed (the database's SET_NULL left no trace)."""
    producer = ProducerFactory(agency=agency, name="Gone Producer")
    carrier = ClientFactory(agency=agency, producer=producer)
    policy = PolicyFactory(client=carrier, producer=producer)
    untouched = PolicyFactory(client=carrier)  # names no producer
    versions = {
        record: type(record).history.filter(id=record.pk).count()
        for record in (carrier, policy, untouched)
    }
    seen = len(api.get("/v1/events?limit=500").json()["results"])

    url = f"/admin/agencies/producer/{producer.pk}/delete/"
    assert producer_staff.post(url, {"post": "yes"}).status_code == 302

    assert not Producer.objects.filter(pk=producer.pk).exists()
    for record, added in ((carrier, 1), (policy, 1), (untouched, 0)):
        history = type(record).history.filter(id=record.pk)
        assert history.count() == versions[record] + added
    for record in (carrier, policy):
        record.refresh_from_db()
        latest = type(record).history.filter(id=record.pk).latest("history_id")
        assert (record.producer_id, latest.producer_id) == (None, None)
        assert latest.history_type == "~" and latest.history_user == producer_staff.user
        assert record.updated_by == producer_staff.user
    events = api.get("/v1/events?limit=500").json()["results"][seen:]
    assert [(e["type"], e["agencyId"], e["clientId"], e["data"]["id"]) for e in events] == [
        ("client.updated", agency.pk, carrier.pk, carrier.pk),
        ("policy.updated", agency.pk, carrier.pk, policy.pk),
    ]
    assert [e["data"]["producerId"] for e in events] == [None, None]
    assert events[1]["data"]["producerName"] is None
    assert events[1]["data"]["updatedBy"] == "producer-staff"
    shown = api.get(f"/v1/policies/{policy.pk}").json()
    assert (shown["producerId"], shown["updatedBy"]) == (None, "producer-staff")
