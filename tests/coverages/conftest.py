"""Shared arrangement of the verification tests: a carrier with one insured, plated unit."""

from __future__ import annotations

import pytest

from apps.masterdata.models import State
from apps.policies.models import PolicyLimit
from tests.factories import PolicyFactory, VehicleCoverageFactory, VehicleFactory

VIN = "1FUJGLDR7CLBP8834"


@pytest.fixture
def covered(carrier):
    policy = PolicyFactory(client=carrier, policy_number="AL-1")
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    unit = VehicleFactory(
        client=carrier,
        serial_number=VIN,
        license_plate="TX-4821A",
        license_plate_state=State.objects.get(code="TX"),
    )
    VehicleCoverageFactory(vehicle=unit, policy=policy)
    return policy, unit
