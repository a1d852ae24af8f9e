"""Writes of agencies, producers, memberships and lienholders, stated without HTTP."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from apps.agencies.models import Agency, AgencyMembership, Producer
from apps.agencies.services import (
    agency_create,
    agency_delete,
    agency_update,
    membership_create,
    membership_delete,
    producer_create,
    producer_delete,
    producer_update,
)
from apps.compliance.models import RequirementProfile
from apps.core.exceptions import Conflict
from apps.events.models import Event
from apps.vehicles.models import Lienholder, Vehicle
from apps.vehicles.services import lienholder_create, lienholder_delete, lienholder_update
from tests.factories import (
    ClientFactory,
    LienholderFactory,
    ProducerFactory,
    UserFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db):
    return UserFactory(username="root", is_superuser=True, is_staff=True)


# --- agencies ------------------------------------------------------------------------------


def test_a_superuser_creates_an_agency_with_its_federal_minimum_profile(root):
    agency = agency_create(user=root, name="New Agency", phone="555-0100")
    assert (agency.name, agency.phone) == ("New Agency", "555-0100")
    assert RequirementProfile.objects.filter(agency=agency, built_in=True).count() == 1


def test_agency_staff_cannot_create_an_agency(manager):
    with pytest.raises(PermissionDenied):
        agency_create(user=manager, name="Side Agency")
    assert not Agency.objects.filter(name="Side Agency").exists()


def test_an_agency_name_is_unique(root, agency):
    with pytest.raises(ValidationError) as error:
        agency_create(user=root, name=agency.name)
    assert "name" in error.value.message_dict


def test_a_member_updates_only_the_fields_given(manager, agency):
    agency_update(user=manager, instance=agency, phone="555-0199")
    agency.refresh_from_db()
    assert (agency.name, agency.phone) == ("Demo Agency", "555-0199")


def test_an_agency_of_someone_else_cannot_be_updated(manager, other_agency):
    with pytest.raises(PermissionDenied):
        agency_update(user=manager, instance=other_agency, phone="555-0199")


def test_an_agency_with_clients_cannot_be_deleted(root, agency, carrier):
    with pytest.raises(Conflict):
        agency_delete(user=root, instance=agency)
    assert Agency.objects.filter(pk=agency.pk).exists()


def test_an_empty_agency_is_deleted_by_a_superuser_only(root, manager, agency):
    with pytest.raises(PermissionDenied):
        agency_delete(user=manager, instance=agency)
    empty = agency_create(user=root, name="Empty Agency")
    RequirementProfile.objects.filter(agency=empty).delete()
    agency_delete(user=root, instance=empty)
    assert not Agency.objects.filter(pk=empty.pk).exists()


# --- producers -----------------------------------------------------------------------------


def test_a_producer_is_created_in_an_agency_the_user_acts_for(manager, agency, other_agency):
    producer = producer_create(user=manager, agency_id=agency.pk, name="Pat Agent")
    assert producer.agency_id == agency.pk
    with pytest.raises(PermissionDenied):
        producer_create(user=manager, agency_id=other_agency.pk, name="Pat Agent")


def test_a_producer_name_is_unique_in_its_agency(manager, agency):
    producer_create(user=manager, agency_id=agency.pk, name="Pat Agent")
    with pytest.raises(ValidationError) as error:
        producer_create(user=manager, agency_id=agency.pk, name="Pat Agent")
    assert "already has a producer of that name" in str(error.value)


def test_a_renamed_producer_keeps_the_rule_and_its_agency(manager, agency, other_agency):
    ProducerFactory(agency=agency, name="Taken")
    producer = ProducerFactory(agency=agency, name="Pat Agent", phone="1")
    with pytest.raises(ValidationError):
        producer_update(user=manager, instance=producer, name="Taken")
    # An agency the user does not serve, existing or not (contract section 4); one the user
    # serves is a 400 on agency_id (tests/admin/test_one_door_agencies.py).
    for agency_id in (other_agency.pk, 999_999):
        with pytest.raises(PermissionDenied):
            producer_update(user=manager, instance=producer, agency_id=agency_id)
    producer_update(user=manager, instance=producer, email="pat@example.com")
    producer.refresh_from_db()
    assert (producer.name, producer.phone, producer.email) == ("Pat Agent", "1", "pat@example.com")


def test_a_producer_of_another_agency_is_not_found(manager, other_agency):
    producer = ProducerFactory(agency=other_agency)
    with pytest.raises(Producer.DoesNotExist):
        producer_update(user=manager, instance=producer, name="Mine now")
    with pytest.raises(Producer.DoesNotExist):
        producer_delete(user=manager, instance=producer)


def test_deleting_a_producer_leaves_its_clients_without_one(manager, agency):
    producer = ProducerFactory(agency=agency)
    client = ClientFactory(agency=agency, producer=producer)
    producer_delete(user=manager, instance=producer)
    client.refresh_from_db()
    assert client.producer_id is None


# --- memberships ---------------------------------------------------------------------------


def test_a_membership_grants_an_agency_the_granting_user_acts_for(manager, agency, other_agency):
    newcomer = UserFactory(username="newcomer")
    membership = membership_create(user=manager, member_id=newcomer.pk, agency_id=agency.pk)
    assert (membership.user, membership.agency) == (newcomer, agency)
    with pytest.raises(PermissionDenied):
        membership_create(user=manager, member_id=newcomer.pk, agency_id=other_agency.pk)


def test_a_membership_is_granted_once(manager, agency):
    with pytest.raises(ValidationError) as error:
        membership_create(user=manager, member_id=manager.pk, agency_id=agency.pk)
    assert "already a member" in str(error.value)


def test_an_unknown_member_is_refused(manager, agency):
    with pytest.raises(ValidationError) as error:
        membership_create(user=manager, member_id=10**9, agency_id=agency.pk)
    assert "user" in error.value.message_dict


def test_a_revoked_membership_is_gone_and_another_agency_s_is_out_of_reach(
    root, manager, other_manager
):
    theirs = AgencyMembership.objects.get(user=other_manager)
    with pytest.raises(AgencyMembership.DoesNotExist):
        membership_delete(user=manager, instance=theirs)
    membership_delete(user=root, instance=theirs)
    assert not AgencyMembership.objects.filter(user=other_manager).exists()


# --- lienholders ---------------------------------------------------------------------------


def test_a_lienholder_is_created_in_the_user_s_agency_only(manager, agency, other_agency):
    bank = lienholder_create(user=manager, agency_id=agency.pk, name="First Bank", phone="1")
    assert (bank.agency_id, bank.name, bank.phone, bank.address) == (
        agency.pk,
        "First Bank",
        "1",
        "",
    )
    with pytest.raises(PermissionDenied):
        lienholder_create(user=manager, agency_id=other_agency.pk, name="First Bank")


def test_a_lienholder_update_changes_only_what_is_given_and_never_its_agency(
    manager, agency, other_agency
):
    bank = LienholderFactory(agency=agency, name="First Bank", phone="1")
    lienholder_update(user=manager, instance=bank, address="1 Main St")
    bank.refresh_from_db()
    assert (bank.name, bank.phone, bank.address) == ("First Bank", "1", "1 Main St")
    with pytest.raises(PermissionDenied):  # an agency the user does not serve
        lienholder_update(user=manager, instance=bank, agency_id=other_agency.pk)


def test_deleting_a_lienholder_releases_its_vehicles_through_vehicle_update(
    manager, agency, carrier
):
    bank = LienholderFactory(agency=agency)
    truck = VehicleFactory(client=carrier, lienholder=bank)
    lienholder_delete(user=manager, instance=bank)
    assert not Lienholder.objects.filter(pk=bank.pk).exists()
    assert Vehicle.objects.get(pk=truck.pk).lienholder_id is None
    assert Event.objects.filter(type="vehicle.updated", client_id=carrier.pk).exists()


def _statements(write) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        write()
    return len(queries.captured_queries)


def test_deleting_a_producer_costs_the_same_statements_for_one_record_or_many(manager, agency):
    """Its clients and policies are cleared in bulk, each with its version and event."""
    from apps.clients.models import Client
    from apps.policies.models import Policy
    from tests.factories import PolicyFactory

    def named_by(clients: int, policies: int) -> Producer:
        producer = ProducerFactory(agency=agency)
        for _ in range(clients):
            client = ClientFactory(agency=agency, producer=producer)
            for _ in range(policies):
                PolicyFactory(client=client, producer=producer)
        return producer

    producer_delete(
        user=manager, instance=ProducerFactory(agency=agency)
    )  # the user's agencies read
    few, many = named_by(1, 1), named_by(4, 3)
    before = Event.objects.count()
    statements = _statements(lambda: producer_delete(user=manager, instance=few))
    assert _statements(lambda: producer_delete(user=manager, instance=many)) == statements
    assert Event.objects.count() - before == (1 + 1) + (4 + 12)
    assert not Client.objects.exclude(producer=None).exists()
    assert not Policy.objects.exclude(producer=None).exists()


def test_deleting_a_lienholder_costs_the_same_statements_for_one_unit_or_many(
    manager, agency, carrier
):
    few, many = LienholderFactory(agency=agency), LienholderFactory(agency=agency)
    VehicleFactory(client=carrier, lienholder=few)
    units = VehicleFactory.create_batch(6, client=carrier, lienholder=many)
    versions = Vehicle.history.filter(id__in=[u.pk for u in units]).count()
    lienholder_delete(user=manager, instance=LienholderFactory(agency=agency))  # agencies read
    statements = _statements(lambda: lienholder_delete(user=manager, instance=few))
    assert _statements(lambda: lienholder_delete(user=manager, instance=many)) == statements
    assert Vehicle.history.filter(id__in=[u.pk for u in units]).count() == versions + 6
    assert Event.objects.filter(type="vehicle.updated", client_id=carrier.pk).count() == 7
    assert not Vehicle.objects.exclude(lienholder=None).exists()
