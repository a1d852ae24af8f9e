"""Verification reads value rows, not model objects (apps.coverages.rows, issue 18): a 200-DOT
call or a 1,000-unit batch builds no client, policy, unit or period object, however many it
answers for, and what it answers (statuses, limits, compliance) is unchanged."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db.models.signals import pre_init

from apps.clients.models import Client
from apps.core.dates import today
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
    # One statement of verification for a VIN (the unit with its client, its covering periods
    # with their policies' columns and limits, one row per limit), whatever covers it: a
    # policy without an insurer or without limits is still read (outer joins), each policy
    # once, its limits in order; a period under a policy not in force is not coverage.
    client = ClientFactory(agency=agency, dot="3100000")
    unit = VehicleFactory(client=client, license_plate="TWIN1")
    liability = PolicyFactory(client=client, policy_number="AL-1")
    cargo = PolicyFactory(client=client, policy_number="MC-1", insurer=None)
    PolicyLimit.objects.create(
        policy=liability, name="Bodily Injury (Per Person)", amount=500_000, position=1
    )
    PolicyLimit.objects.create(policy=liability, name="Property Damage", amount=750_000)
    lapsed = PolicyFactory(
        client=client,
        policy_number="AL-0",
        effective_date=today() - dt.timedelta(days=400),
        expiration_date=today() - dt.timedelta(days=35),
    )
    for policy in (liability, cargo, lapsed):
        VehicleCoverageFactory(vehicle=unit, policy=policy)
    api.get(f"/v1/coverages/vehicles?vin={unit.serial_number}")  # the caller's first reads
    with django_assert_num_queries(2) as queries:  # the caller's statement, then verification
        body = api.get(f"/v1/coverages/vehicles?vin={unit.serial_number}").json()
    read = queries.captured_queries[1]["sql"]
    assert '"vehicles_vehicle"' in read and '"coverages_vehiclecoverage"' in read
    assert "policy_number" in read and '"policies_policylimit"' in read
    [result] = body["results"]
    assert result["status"] == "ACTIVE"
    numbers = sorted((c["policyNumber"], c["insurerName"]) for c in result["coverages"])
    assert [n for n, _ in numbers] == ["AL-1", "MC-1"] and numbers[1][1] is None
    limits = {c["policyNumber"]: c["limits"] for c in result["coverages"]}
    assert limits == {
        "AL-1": [
            {"name": "Property Damage", "amount": "750000.00"},
            {"name": "Bodily Injury (Per Person)", "amount": "500000.00"},
        ],
        "MC-1": [],
    }
    # Two units of one plate on the same policy: the policy's limits once, for both.
    twin = VehicleFactory(client=client, license_plate="TWIN1")
    VehicleCoverageFactory(vehicle=twin, policy=liability)
    results = api.get("/v1/coverages/vehicles?licensePlate=TWIN1").json()["results"]
    assert [r["vehicle"]["id"] for r in results] == [unit.id, twin.id]
    assert [c["limits"] for c in results[1]["coverages"]] == [limits["AL-1"]]
    assert {c["policyNumber"]: c["limits"] for c in results[0]["coverages"]} == limits


def test_one_dot_reads_its_client_policies_and_limits_in_one_statement(
    api, agency, built, django_assert_num_queries
):
    # One DOT (or a client id) is one statement of verification: the client joined to its live
    # policies not ended on D and to their limits. It answers exactly as the two statements of
    # a many-DOT call (the clients with their policies, then the limits): policies in order,
    # each policy's limits in order, a policy without limits and a client without policies
    # still there, ended and deleted policies left out.
    carrier = ClientFactory(agency=agency, dot="3200000")
    bare = ClientFactory(agency=agency, dot="3200001")
    liability = PolicyFactory(client=carrier, policy_number="AL-1")
    PolicyFactory(client=carrier, policy_number="AL-2", insurer=None)
    future = PolicyFactory(
        client=carrier,
        policy_number="AL-3",
        effective_date=today() + dt.timedelta(days=10),
        expiration_date=today() + dt.timedelta(days=375),
    )
    PolicyFactory(
        client=carrier,
        policy_number="OLD",
        effective_date=today() - dt.timedelta(days=400),
        expiration_date=today() - dt.timedelta(days=35),
    )
    PolicyFactory(client=carrier, policy_number="GONE", deleted=True)
    for position, name in enumerate(
        ["Property Damage", "Bodily Injury (Per Person)", "Bodily Injury (Per Accident)"]
    ):
        PolicyLimit.objects.create(
            policy=liability, name=name, amount=100_000 * (position + 1), position=2 - position
        )
    PolicyLimit.objects.create(policy=future, name="Combined Single Limit", amount=1_000_000)
    built.clear()  # what the test built above
    api.get("/v1/coverages/clients?dot=3200000")  # the caller's first reads
    with django_assert_num_queries(2):  # the caller's statement, then verification's one
        [one] = api.get("/v1/coverages/clients?dot=3200000").json()["results"]
    [by_id] = api.get(f"/v1/coverages/clients?id={carrier.id}").json()["results"]
    many = api.get("/v1/coverages/clients?dots=3200000&dots=3200001").json()["results"]
    assert built == []
    assert one == by_id == many[0]
    assert [c["policyNumber"] for c in one["coverages"]] == ["AL-1", "AL-2", "AL-3"]
    assert [c["status"] for c in one["coverages"]] == ["ACTIVE", "ACTIVE", "FUTURE"]
    assert [limit["name"] for limit in one["coverages"][0]["limits"]] == [
        "Bodily Injury (Per Accident)",
        "Bodily Injury (Per Person)",
        "Property Damage",
    ]
    assert one["coverages"][1]["limits"] == [] and one["coverages"][1]["insurerName"] is None
    assert one["coverages"][2]["limits"] == [
        {"name": "Combined Single Limit", "amount": "1000000.00"}
    ]
    [alone] = api.get("/v1/coverages/clients?dot=3200001").json()["results"]
    assert alone == many[1]
    assert (alone["status"], alone["coverages"], alone["client"]["id"]) == ("INACTIVE", [], bare.id)
    assert (one["verified"], one["status"]) == (True, "ACTIVE")


def test_each_policys_limits_come_by_position_then_id_whatever_order_they_were_written(api, agency):
    # The limits' order is put in Python (apps.coverages.selectors._fill_limits), not by the
    # statement: written out of order, across two carriers' policies, read back in order.
    first, second = ClientFactory(agency=agency), ClientFactory(agency=agency)
    policies = [PolicyFactory(client=first), PolicyFactory(client=second)]
    for name, position, policy in [
        ("C", 2, policies[1]),
        ("B", 1, policies[0]),
        ("Z", 0, policies[1]),
        ("A", 0, policies[0]),
        ("D", 2, policies[1]),
        ("Y", 0, policies[1]),
    ]:
        PolicyLimit.objects.create(policy=policy, name=name, amount=1000, position=position)
    body = api.get(f"/v1/coverages/clients?dots={first.dot}&dots={second.dot}").json()
    names = [[limit["name"] for limit in r["coverages"][0]["limits"]] for r in body["results"]]
    assert names == [["A", "B"], ["Z", "Y", "C", "D"]]
