"""Verification reads value rows, not model objects (apps.coverages.rows, issue 18): a 200-DOT
call or a 1,000-unit batch builds no client, policy, unit or period object, however many it
answers for, and what it answers (statuses, limits, compliance) is unchanged."""

from __future__ import annotations

import pytest
from django.db.models.signals import pre_init

from apps.clients.models import Client
from apps.coverages.models import VehicleCoverage
from apps.masterdata.models import CoverageType, Insurer, Make, State
from apps.policies.models import Policy, PolicyLimit
from apps.vehicles.models import Vehicle
from tests.factories import ClientFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db
# (Not Agency: resolving the profile reads its agency once per call, whatever the call's size.)
READ_MODELS = (
    Client,
    CoverageType,
    Insurer,
    Make,
    Policy,
    PolicyLimit,
    State,
    Vehicle,
    VehicleCoverage,
)


@pytest.fixture
def built():
    """The verification models instantiated while the fixture is active."""
    seen = []

    def record(sender, **kwargs):
        if sender in READ_MODELS:
            seen.append(sender)

    pre_init.connect(record, weak=False)
    yield seen
    pre_init.disconnect(record)


@pytest.fixture
def fleet(agency):
    """Twelve insured clients, each with a limit and a covered, plated unit."""
    clients, vins = [], []
    for n in range(12):
        client = ClientFactory(agency=agency, dot=str(3_000_000 + n))
        policy = PolicyFactory(client=client, policy_number=f"AL-{n}")
        PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=750_000)
        unit = VehicleFactory(client=client, license_plate_state=State.objects.get(code="TX"))
        VehicleCoverageFactory(vehicle=unit, policy=policy)
        clients.append(client)
        vins.append(unit.serial_number)
    return clients, vins


def test_many_dots_build_no_model_object(api, fleet, built):
    clients, _vins = fleet
    dots = "&".join(f"dots={c.dot}" for c in clients)
    body = api.get(f"/v1/coverages/clients?{dots}&profile=federal-minimum").json()
    assert built == []
    assert [r["client"]["id"] for r in body["results"]] == [c.id for c in clients]
    for result in body["results"]:
        assert result["status"] == "ACTIVE"
        [coverage] = result["coverages"]
        assert coverage["limits"] == [{"name": "Combined Single Limit", "amount": "750000.00"}]
        assert result["compliance"]["result"] == "PASS"


def test_a_batch_builds_no_model_object(api, fleet, built):
    clients, vins = fleet
    request = {"vins": [*vins, vins[0], "1HGCM82633A004352"], "profile": "federal-minimum"}
    body = api.post("/v1/coverages/vehicles/batch", request, format="json").json()
    assert built == []
    assert body["summary"]["requested"] == 13
    assert body["summary"]["covered"] == 12
    assert body["summary"]["notFound"] == 1
    entry = body["results"][0]
    assert entry["client"]["id"] == clients[0].id
    assert entry["vehicle"]["licensePlateState"] == "TX"
    assert entry["coverages"][0]["limits"][0]["amount"] == "750000.00"
    assert entry["compliance"]["result"] == "PASS"


def test_a_units_periods_come_with_their_policies_in_one_read(
    api, agency, django_assert_num_queries
):
    # Three statements of verification for a VIN (the unit with its client, its covering
    # periods with their policies' columns, the limits), whatever covers it: a policy
    # without an insurer is still read (the insurer is an outer join), and each policy once.
    client = ClientFactory(agency=agency, dot="3100000")
    unit = VehicleFactory(client=client)
    liability = PolicyFactory(client=client, policy_number="AL-1")
    cargo = PolicyFactory(client=client, policy_number="MC-1", insurer=None)
    PolicyLimit.objects.create(policy=liability, name="Combined Single Limit", amount=750_000)
    for policy in (liability, cargo):
        VehicleCoverageFactory(vehicle=unit, policy=policy)
    api.get(f"/v1/coverages/vehicles?vin={unit.serial_number}")  # the caller's first reads
    with django_assert_num_queries(4) as queries:  # the caller's statement, then verification
        body = api.get(f"/v1/coverages/vehicles?vin={unit.serial_number}").json()
    periods = queries.captured_queries[2]["sql"]
    assert (
        '"coverages_vehiclecoverage"' in periods and '"policies_policy"."policy_number"' in periods
    )
    [result] = body["results"]
    assert result["status"] == "ACTIVE"
    numbers = sorted((c["policyNumber"], c["insurerName"]) for c in result["coverages"])
    assert [n for n, _ in numbers] == ["AL-1", "MC-1"] and numbers[1][1] is None
    limits = {c["policyNumber"]: c["limits"] for c in result["coverages"]}
    assert limits == {
        "AL-1": [{"name": "Combined Single Limit", "amount": "750000.00"}],
        "MC-1": [],
    }
