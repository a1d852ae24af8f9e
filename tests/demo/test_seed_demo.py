"""Contract section 2: seed_demo builds the fixed demo world, idempotently."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from apps.clients.models import Client
from apps.demo.seed import DEMO_API_KEY, DEMO_PASSWORD

pytestmark = pytest.mark.django_db


def test_refuses_without_debug_unless_forced(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError):
        call_command("seed_demo")


def test_seeds_idempotently_and_the_credentials_work(settings):
    out = StringIO()
    call_command("seed_demo", "--force", stdout=out)
    count = Client.objects.count()
    call_command("seed_demo", "--force", stdout=StringIO())
    assert Client.objects.count() == count
    assert DEMO_API_KEY in out.getvalue()

    client = APIClient()
    client.credentials(HTTP_APIKEY=DEMO_API_KEY)
    tokens = {}
    for username in ("demo-admin", "demo-viewer", "other-admin", "admin"):
        response = client.post(
            "/v1/auth/token", {"username": username, "password": DEMO_PASSWORD}, format="json"
        )
        assert response.status_code == 200, username
        tokens[username] = response.json()["access"]

    def clients_of(username):
        client.credentials(
            HTTP_APIKEY=DEMO_API_KEY, HTTP_AUTHORIZATION=f"Bearer {tokens[username]}"
        )
        return {c["clientName"] for c in client.get("/v1/clients?limit=200").json()["results"]}

    assert "Lone Star Freight LLC" in clients_of("demo-admin")
    assert "Rival Transport Co" not in clients_of("demo-admin")
    assert clients_of("other-admin") == {"Rival Transport Co"}
    assert clients_of("demo-viewer") == clients_of("demo-admin")
    assert clients_of("admin") >= clients_of("demo-admin") | clients_of("other-admin")


def test_the_demo_is_written_through_the_services():
    """Issue 14: every record of the demo is created by a service, as "admin" (audit trail,
    change events), and seeding again writes nothing."""
    from apps.demo.seed import seed_demo
    from apps.drivers.models import Driver
    from apps.events.models import Event
    from apps.masterdata.models import Insurer
    from apps.policies.models import Policy
    from apps.vehicles.models import Vehicle

    world = seed_demo()
    for model in (Client, Policy, Vehicle, Driver):
        makers = set(model.objects.values_list("created_by__username", flat=True))
        assert makers == {"admin"}, model
    created = {
        kind: Event.objects.filter(type=f"{kind}.created").count()
        for kind in ("client", "policy", "vehicle")
    }
    assert created == {
        "client": Client.objects.count(),
        "policy": Policy.objects.count(),
        "vehicle": Vehicle.objects.count(),
    }
    lone_star = world.clients["lone_star"]
    auto = Policy.objects.get(policy_number__startswith="GWC-AL-", client=lone_star)
    assert [(lim.name, str(lim.amount)) for lim in auto.limits.order_by("position")] == [
        ("Combined Single Limit", "1000000.00")
    ]
    assert auto.rates.count() == 2
    assert Insurer.objects.get(name="Great West Casualty Company").am_best_rating == "A+"
    assert Client.objects.get(pk=world.clients["gulf"].pk).cargo_class == "HAZMAT"

    events = Event.objects.count()
    seed_demo()
    assert Event.objects.count() == events


def test_seeding_again_after_staff_edited_the_world_keeps_their_edits(settings):
    """`make run` seeds on every start: a world staff have changed (a DOT, a policy number, a
    unit deleted) starts again as they left it, with its credentials, and gains no copy."""
    from apps.clients.services import client_update
    from apps.demo.seed import seed_demo
    from apps.events.models import Event
    from apps.policies.models import Policy
    from apps.policies.services import policy_update
    from apps.vehicles.models import Vehicle
    from apps.vehicles.services import vehicle_update

    world = seed_demo()
    admin = world.clients["lone_star"].created_by
    client_update(user=admin, instance=world.clients["lone_star"], dot="3456000")
    policy = Policy.objects.filter(client=world.clients["prairie"]).first()
    policy_update(user=admin, instance=policy, policy_number="EDITED-1")
    unit = Vehicle.objects.filter(client=world.clients["gulf"]).first()
    vehicle_update(user=admin, instance=unit, deleted=True)
    counts = (Client.objects.count(), Policy.objects.count(), Vehicle.objects.count())
    events = Event.objects.count()

    out = StringIO()
    call_command("seed_demo", "--force", stdout=out)

    assert (Client.objects.count(), Policy.objects.count(), Vehicle.objects.count()) == counts
    assert Event.objects.count() == events
    assert Client.objects.get(pk=world.clients["lone_star"].pk).dot == "3456000"
    assert Policy.objects.get(pk=policy.pk).policy_number == "EDITED-1"
    assert Vehicle.objects.get(pk=unit.pk).deleted
    printed = out.getvalue()
    assert "left as it is" in printed and DEMO_API_KEY in printed
    assert f"Client {world.clients['prairie'].pk}: Prairie Haulers Inc" in printed
    assert "Lone Star Freight LLC, DOT 3456000" in printed  # as staff left it
    client = APIClient()
    client.credentials(HTTP_APIKEY=DEMO_API_KEY)
    login = {"username": "demo-admin", "password": DEMO_PASSWORD}
    assert client.post("/v1/auth/token", login, format="json").status_code == 200


def test_seeding_again_after_staff_renamed_the_agencies_and_an_insurer_adds_no_copy(settings):
    from apps.agencies.models import Agency, AgencyMembership
    from apps.agencies.services import agency_update
    from apps.demo.seed import seed_demo
    from apps.masterdata.models import Insurer
    from apps.masterdata.services import masterdata_update

    world = seed_demo()
    admin = world.clients["lone_star"].created_by
    agency_update(user=admin, instance=world.agency, name="Demo Agency Renamed")
    insurer = Insurer.objects.get(naic="11371")
    masterdata_update(user=admin, instance=insurer, name="Great West Renamed")
    counts = (Agency.objects.count(), Insurer.objects.count(), AgencyMembership.objects.count())

    call_command("seed_demo", "--force", stdout=StringIO())

    assert (
        Agency.objects.count(),
        Insurer.objects.count(),
        AgencyMembership.objects.count(),
    ) == counts
    assert list(
        AgencyMembership.objects.filter(user__username="demo-admin").values_list(
            "agency__name", flat=True
        )
    ) == ["Demo Agency Renamed"]
    assert Insurer.objects.get(pk=insurer.pk).name == "Great West Renamed"
