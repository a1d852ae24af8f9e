"""The demo's compliance world: rated insurers, a hazmat carrier and two contract profiles, so
docs/compliance.md shows PASS, CAUTION and FAIL with real calls."""

from __future__ import annotations

from apps.clients.models import CargoClass
from apps.clients.services import client_update
from apps.compliance.models import RequirementProfile
from apps.compliance.services import (
    federal_minimum_ensure,
    insurer_update,
    requirement_profile_create,
)
from apps.masterdata.models import Insurer

RATINGS = {"Great West Casualty Company": "A+", "Northland Insurance Company": "A"}

# What a shipper's transportation agreement typically demands of a carrier.
SHIPPER = [
    {
        "kind": "coverage",
        "coverage_type": "AL",
        "minimum_limit": "1000000.00",
        "limit_name": "Combined Single Limit",
    },
    {"kind": "coverage", "coverage_type": "MTC", "minimum_limit": "100000.00"},
    {"kind": "insurer_rating", "minimum": "A"},
    {"kind": "expiration_notice", "days": 30},
    {"kind": "federal_minimum"},
]
# A broker's carrier packet: stricter on the insurer and on endorsements.
BROKER = [
    {"kind": "coverage", "coverage_type": "AL", "minimum_limit": "1000000.00"},
    {"kind": "coverage", "coverage_type": "APD"},
    {"kind": "insurer_rating", "minimum": "A+"},
    {"kind": "additional_insured"},
    {"kind": "waiver_of_subrogation"},
]


def seed_profiles(world, *, admin) -> None:
    for insurer in Insurer.objects.filter(name__in=RATINGS, am_best_rating=""):
        insurer_update(user=admin, instance=insurer, am_best_rating=RATINGS[insurer.name])
    gulf = world.clients["gulf"]
    if gulf.cargo_class != CargoClass.HAZMAT:
        client_update(user=admin, instance=gulf, cargo_class=CargoClass.HAZMAT)
    federal_minimum_ensure(agency_ids=[world.agency.id, world.other_agency.id])
    for code, name, rules in (
        ("shipper-contract", "Shipper contract", SHIPPER),
        ("broker-contract", "Broker carrier packet", BROKER),
    ):
        if not RequirementProfile.objects.filter(agency=world.agency, code=code).exists():
            requirement_profile_create(
                user=admin, agency_id=world.agency.id, code=code, name=name, rules=rules
            )
