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
