"""The demo's compliance world: rated insurers, a hazmat carrier and two contract profiles, so
docs/compliance.md shows PASS, CAUTION and FAIL with real calls."""

from __future__ import annotations

from apps.clients.models import CargoClass
from apps.compliance.models import RequirementProfile
from apps.compliance.rules import rules_clean
from apps.compliance.services import federal_minimum_ensure
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
    for name, rating in RATINGS.items():
        Insurer.objects.filter(name=name, am_best_rating="").update(am_best_rating=rating)
    gulf = world.clients["gulf"]
    if gulf.cargo_class != CargoClass.HAZMAT:
        gulf.cargo_class = CargoClass.HAZMAT
        gulf.save(update_fields=["cargo_class"])
    federal_minimum_ensure(agency_ids=[world.agency.id, world.other_agency.id])
    for code, name, rules in (
        ("shipper-contract", "Shipper contract", SHIPPER),
        ("broker-contract", "Broker carrier packet", BROKER),
    ):
        RequirementProfile.objects.get_or_create(
            agency=world.agency,
            code=code,
            defaults={
                "name": name,
                "rules": rules_clean(rules),
                "created_by": admin,
                "updated_by": admin,
            },
        )
