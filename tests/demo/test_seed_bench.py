"""seed_bench writes around the services (COPY on PostgreSQL): it must follow every schema
change, or `make bench` breaks without any other test noticing (it did twice: cargo_class,
then the policies' agency)."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db.models import F

from apps.clients.models import Client
from apps.drivers.models import Driver
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle

# Transactional: on PostgreSQL seed_bench ends with VACUUM ANALYZE, which refuses to run
# inside the transaction an ordinary test is wrapped in.
pytestmark = pytest.mark.django_db(transaction=True)


def test_seed_bench_builds_a_consistent_small_world(master_data_back):
    call_command(
        "seed_bench",
        clients=12,
        vehicles=40,
        big_fleet=30,
        medium_fleet=10,
        drivers=5,
        small_clients=3,
        verbosity=0,
    )
    assert Client.objects.count() >= 12
    assert Vehicle.objects.count() >= 70
    policies = Policy.objects.all()
    assert policies.exists()
    # Every copied policy carries its client's agency (the uniqueness rule depends on it).
    assert not policies.exclude(agency_id=F("client__agency_id")).exists()
    # So does every vehicle and driver (agency scoping and the lists' sort indexes read it).
    assert not Vehicle.objects.exclude(agency_id=F("client__agency_id")).exists()
    # And its make's name (`sort=make` reads the copy); COPY writes it on PostgreSQL.
    assert not Vehicle.objects.exclude(make_name=F("make__name")).exists()
    assert Driver.objects.count() == 5
    assert not Driver.objects.exclude(agency_id=F("client__agency_id")).exists()
    assert not Client.objects.filter(cargo_class="").exists()


def test_seed_bench_makes_its_agencies_and_users_through_the_services(master_data_back):
    """Issue 14: only the bulk rows are copied; the agencies (with their federal-minimum
    profile), memberships and the insurer go through their services."""
    from apps.agencies.models import AgencyMembership
    from apps.compliance.models import RequirementProfile
    from apps.masterdata.models import Insurer

    call_command(
        "seed_bench",
        clients=6,
        vehicles=30,
        big_fleet=3,
        medium_fleet=2,
        drivers=1,
        small_clients=2,
        verbosity=0,
    )
    members = set(AgencyMembership.objects.values_list("user__username", "agency__name"))
    assert members == {("bench-large", "Bench Large"), ("bench-small", "Bench Small")}
    assert (
        RequirementProfile.objects.filter(agency__name__startswith="Bench", built_in=True).count()
        == 2
    )
    assert Insurer.objects.by_name("bench mutual").get().naic == "99999"
