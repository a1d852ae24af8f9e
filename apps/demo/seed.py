"""The fixed demo world of contract section 2, created idempotently."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import transaction

from apps.accounts.models import ApiKey, hash_api_key
from apps.accounts.services import api_key_create
from apps.agencies.models import Agency, AgencyMembership, Producer
from apps.agencies.services import agency_create, membership_create, producer_create
from apps.clients.models import Client
from apps.demo.access import groups_ensure
from apps.demo.fleet import seed_documents, seed_fleet, seed_report
from apps.demo.profiles import seed_profiles
from apps.masterdata.models import City, ClientType, Insurer, State
from apps.masterdata.services import masterdata_load

DEMO_PASSWORD = "demo-password"
DEMO_API_KEY = "demo-api-key"


@dataclass
class DemoWorld:
    agency: Agency
    other_agency: Agency
    clients: dict[str, Client] = field(default_factory=dict)


def _user(
    username: str, *, agency: Agency | None, group, staff: bool, superuser: bool = False, by=None
):
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created or not user.check_password(DEMO_PASSWORD):
        user.set_password(DEMO_PASSWORD)
    user.is_staff = staff or superuser
    user.is_superuser = superuser
    user.save()
    if group is not None:
        user.groups.set([group])
    if (
        agency is not None
        and not AgencyMembership.objects.filter(user=user, agency=agency).exists()
    ):
        membership_create(user=by, member_id=user.pk, agency_id=agency.pk)
    return user


def _agency(root, *, name: str, **fields) -> Agency:
    return Agency.objects.filter(name=name).first() or agency_create(user=root, name=name, **fields)


def _client(agency: Agency, *, name: str, dot: str, city: str, state: str, **extra) -> Client:
    state_obj = State.objects.get(code=state)
    client, _ = Client.objects.live().update_or_create(
        agency=agency,
        dot=dot,
        defaults={
            "client_name": name,
            "state": state_obj,
            "city": City.objects.get(state=state_obj, name_key=city.lower()),
            "client_type": ClientType.objects.get(name="Motor Carrier"),
            **extra,
        },
    )
    return client


@transaction.atomic
def seed_demo() -> DemoWorld:
    masterdata_load()
    manager, viewer = groups_ensure()
    # Agencies, producers and memberships through their services, as the superuser.
    admin = _user("admin", agency=None, group=None, staff=True, superuser=True)
    agency = _agency(
        admin,
        name="Demo Agency",
        address="100 Main St, Dallas, TX 75201",
        phone="214-555-0100",
        email="service@demo-agency.example",
    )
    other = _agency(
        admin, name="Other Agency", address="9 Elm St, Omaha, NE 68102", phone="402-555-0199"
    )
    _user("demo-admin", agency=agency, group=manager, staff=True, by=admin)
    _user("demo-viewer", agency=agency, group=viewer, staff=False, by=admin)
    _user("other-admin", agency=other, group=manager, staff=True, by=admin)
    if not ApiKey.objects.filter(key_hash=hash_api_key(DEMO_API_KEY)).exists():
        api_key_create(name="Demo integration", raw_key=DEMO_API_KEY)

    Insurer.objects.get_or_create(
        name="Great West Casualty Company",
        defaults={
            "name_key": "great west casualty company",
            "naic": "11371",
            "address": "1100 West 29th Street, South Sioux City, NE 68776",
        },
    )
    Insurer.objects.get_or_create(
        name="Northland Insurance Company",
        defaults={
            "name_key": "northland insurance company",
            "naic": "24015",
            "address": "385 Washington Street, St. Paul, MN 55102",
        },
    )
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

    world = DemoWorld(agency=agency, other_agency=other)
    world.clients["lone_star"] = _client(
        agency,
        name="Lone Star Freight LLC",
        dot="1234567",
        city="Dallas",
        state="TX",
        producer=producer,
        address="2500 Logistics Pkwy",
        zip_code="75212",
        phone="214-555-0142",
        email="dispatch@lonestarfreight.example",
    )
    world.clients["prairie"] = _client(
        agency,
        name="Prairie Haulers Inc",
        dot="2345678",
        city="Wichita",
        state="KS",
        producer=producer,
        address="801 E Industrial Rd",
        zip_code="67216",
    )
    world.clients["gulf"] = _client(
        agency,
        name="Gulf Coast Logistics",
        dot="3456789",
        city="Houston",
        state="TX",
        producer=producer,
        address="77 Port Rd",
        zip_code="77029",
    )
    world.clients["rival"] = _client(
        other,
        name="Rival Transport Co",
        dot="7654321",
        city="Omaha",
        state="NE",
        address="12 Dock St",
        zip_code="68102",
    )
    seed_fleet(world, admin=admin)
    seed_documents(world, admin=admin)
    seed_report(world, admin=admin)
    seed_profiles(world, admin=admin)
    return world
