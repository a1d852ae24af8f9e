"""The fixed demo world of contract section 2, created idempotently.

Everything is written through the services, as the superuser "admin" (the documented demo's
records are created by "admin" and announced in the change feed like any other write); what
exists already is left as it is, so seeding twice changes nothing. The access (groups, users,
their passwords, the API key, master data) is ensured on every run; the world (clients, their
policies, units, drivers, documents, report, profiles) is written once, in the run that finds
the demo agencies without clients, and is staff's from then on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from apps.agencies.models import Agency, Producer
from apps.agencies.services import producer_create
from apps.clients.models import Client
from apps.clients.services import client_create
from apps.core.history import history_user
from apps.demo.access import agency_ensure, api_key_ensure, groups_ensure, user_ensure
from apps.demo.fleet import seed_documents, seed_fleet, seed_report
from apps.demo.profiles import seed_profiles
from apps.masterdata.models import City, ClientType, Insurer, State
from apps.masterdata.services import masterdata_create, masterdata_load

DEMO_PASSWORD = "demo-password"
DEMO_API_KEY = "demo-api-key"
INSURERS = [
    (
        "Great West Casualty Company",
        "11371",
        "1100 West 29th Street, South Sioux City, NE 68776",
    ),
    ("Northland Insurance Company", "24015", "385 Washington Street, St. Paul, MN 55102"),
]

# The demo's clients, in the order they are created (their ids are docs/api.md's): the key the
# fleet names them by, their agency, name, DOT, city, state, street address, ZIP, and contacts.
# fmt: off
CLIENTS = (
    ("lone_star", "demo", "Lone Star Freight LLC", "1234567", "Dallas", "TX", "2500 Logistics Pkwy", "75212",  # noqa: E501
     {"phone": "214-555-0142", "email": "dispatch@lonestarfreight.example"}),
    ("prairie", "demo", "Prairie Haulers Inc", "2345678", "Wichita", "KS", "801 E Industrial Rd", "67216", {}),  # noqa: E501
    ("gulf", "demo", "Gulf Coast Logistics", "3456789", "Houston", "TX", "77 Port Rd", "77029", {}),
    ("rival", "other", "Rival Transport Co", "7654321", "Omaha", "NE", "12 Dock St", "68102", {}),
)
# fmt: on


@dataclass
class DemoWorld:
    agency: Agency
    other_agency: Agency
    clients: dict[str, Client] = field(default_factory=dict)
    # Seeded by an earlier run: the clients are the demo agencies' as staff left them.
    found: bool = False


def _client(
    admin, agency: Agency, *, name: str, dot: str, city: str, state: str, **extra
) -> Client:
    client = Client.objects.live().filter(agency=agency, dot=dot).first()
    if client is not None:
        return client
    state_obj = State.objects.get(code=state)
    return client_create(
        user=admin,
        agency_id=agency.pk,
        client_name=name,
        dot=dot,
        state=state_obj,
        city=City.objects.get(state=state_obj, name_key=city.lower()),
        client_type=ClientType.objects.get(name="Motor Carrier"),
        **extra,
    )


@transaction.atomic
def seed_demo() -> DemoWorld:
    masterdata_load()
    manager, viewer = groups_ensure()
    admin = user_ensure("admin", password=DEMO_PASSWORD, superuser=True)
    # The audit trail names "admin" as the author of every change, as `created_by` does.
    with history_user(admin):
        return _seed_as(admin, manager, viewer)


def _seed_as(admin, manager, viewer) -> DemoWorld:
    agency = agency_ensure(
        admin,
        name="Demo Agency",
        member="demo-admin",
        address="100 Main St, Dallas, TX 75201",
        phone="214-555-0100",
        email="service@demo-agency.example",
    )
    other = agency_ensure(
        admin,
        name="Other Agency",
        member="other-admin",
        address="9 Elm St, Omaha, NE 68102",
        phone="402-555-0199",
    )
    for username, member_of, group, staff in (
        ("demo-admin", agency, manager, True),
        ("demo-viewer", agency, viewer, False),
        ("other-admin", other, manager, True),
    ):
        user_ensure(
            username,
            password=DEMO_PASSWORD,
            group=group,
            agency=member_of,
            staff=staff,
            by=admin,
        )
    api_key_ensure(name="Demo integration", raw_key=DEMO_API_KEY)

    for name, naic, address in INSURERS:
        # By name or NAIC: one staff have renamed is still the demo's.
        if not (
            Insurer.objects.by_name(name).exists() or Insurer.objects.filter(naic=naic).exists()
        ):
            masterdata_create(user=admin, model=Insurer, name=name, naic=naic, address=address)

    world = DemoWorld(agency=agency, other_agency=other)
    seeded = Client.objects.filter(agency__in=(agency, other)).order_by("pk")
    if seeded.exists():
        # Seeded before (the world is written in one transaction: all of it, or none): what
        # staff have done to it since (a DOT or a policy number changed, a unit deleted) is
        # theirs, and seeding it again around their changes would collide with them (a unit
        # scheduled on a policy that moved) or copy it (a client under its old DOT).
        # `make demo-reset` brings the documented world back.
        world.found = True
        world.clients = {str(client.pk): client for client in seeded.live()}
        return world
    producer = Producer.objects.filter(agency=agency, name="Demo Producer").first()
    producer = producer or producer_create(
        user=admin,
        agency_id=agency.pk,
        name="Demo Producer",
        contact_name="Dana Producer",
        phone="214-555-0101",
        email="dana@demo-agency.example",
        address="100 Main St, Dallas, TX 75201",
    )

    agencies = {"demo": agency, "other": other}
    for key, at, name, dot, city, state, address, zip_code, contact in CLIENTS:
        # The demo agency's clients are its producer's.
        producer_of = {"producer_id": producer.pk} if at == "demo" else {}
        world.clients[key] = _client(
            admin,
            agencies[at],
            name=name,
            dot=dot,
            city=city,
            state=state,
            address=address,
            zip_code=zip_code,
            **producer_of,
            **contact,
        )
    seed_fleet(world, admin=admin)
    seed_documents(world, admin=admin)
    seed_report(world, admin=admin)
    seed_profiles(world, admin=admin)
    return world
