"""The fleet gap check by plate (contract section 8): a plate in two states names two trucks.

An entry of `licensePlates` is a plate, or `{"licensePlate", "licensePlateState"}` naming its
state as `GET /v1/coverages/vehicles?licensePlateState=` does. A bare plate that units of
several states carry is verified only when each of those trucks is covered; otherwise the first
uncovered one answers, so the gap shows, and the entry lists the states it matched. With a
profile the entry judges the truck it shows, so the worst-judged truck answers.
"""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.masterdata.models import CoverageType, State
from apps.policies.models import PolicyLimit
from tests.conftest import assert_problem
from tests.factories import ClientFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db
BATCH = "/v1/coverages/vehicles/batch"


def _batch(api, plates, **extra):
    response = api.post(BATCH, {"licensePlates": plates, **extra}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def policy(carrier):
    policy = PolicyFactory(client=carrier, policy_number="AL-1")
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    return policy


@pytest.fixture
def two_trucks(carrier, policy):
    """Plate VT-0002 on two trucks: the Texas one (the lower id) not scheduled, the Oklahoma
    one covered."""
    texas = VehicleFactory(
        client=carrier, license_plate="VT-0002", license_plate_state=State.objects.get(code="TX")
    )
    oklahoma = VehicleFactory(
        client=carrier, license_plate="VT-0002", license_plate_state=State.objects.get(code="OK")
    )
    VehicleCoverageFactory(vehicle=oklahoma, policy=policy)
    return texas, oklahoma


def test_a_plate_of_two_states_with_one_truck_uncovered_is_not_verified(api, two_trucks):
    texas, _oklahoma = two_trucks
    body = _batch(api, ["VT-0002"])
    [entry] = body["results"]
    assert entry["licensePlate"] == "VT-0002"
    assert entry["licensePlateStates"] == ["OK", "TX"]
    assert (entry["found"], entry["verified"], entry["status"]) == (True, False, "INACTIVE")
    assert entry["vehicle"]["id"] == texas.id and entry["vehicle"]["licensePlateState"] == "TX"
    assert entry["coverages"] == []
    assert body["summary"] == {"requested": 1, "covered": 0, "uncovered": 1, "notFound": 0}


def test_a_plate_of_two_states_is_verified_when_each_truck_is_covered(api, two_trucks, policy):
    texas, _oklahoma = two_trucks
    VehicleCoverageFactory(vehicle=texas, policy=policy)
    [entry] = _batch(api, ["vt 0002"])["results"]
    assert (entry["verified"], entry["status"]) == (True, "ACTIVE")
    assert entry["licensePlateStates"] == ["OK", "TX"]
    assert entry["vehicle"]["id"] == texas.id and entry["coverages"][0]["policyNumber"] == "AL-1"


def test_the_uncovered_truck_answers_even_when_the_covered_one_has_the_lower_id(
    api, carrier, policy
):
    covered = VehicleFactory(
        client=carrier, license_plate="VT-0002", license_plate_state=State.objects.get(code="TX")
    )
    VehicleCoverageFactory(vehicle=covered, policy=policy)
    bare = VehicleFactory(
        client=carrier, license_plate="VT-0002", license_plate_state=State.objects.get(code="OK")
    )
    [entry] = _batch(api, ["VT-0002"])["results"]
    assert (entry["verified"], entry["vehicle"]["id"]) == (False, bare.id)


def test_a_plate_entry_may_name_its_state(api, two_trucks):
    texas, oklahoma = two_trucks
    body = _batch(
        api,
        [
            {"licensePlate": "VT-0002", "licensePlateState": "TX"},
            {"licensePlate": "vt 0002", "licensePlateState": " Oklahoma "},
            {"licensePlate": "VT0002", "licensePlateState": "tx"},  # the first entry again
            {"licensePlate": "VT-0002", "licensePlateState": "Nevada"},
        ],
    )
    assert body["results"] == [
        {
            "licensePlate": "VT-0002",
            "licensePlateState": "TX",
            "found": True,
            "verified": False,
            "status": "INACTIVE",
            "vehicle": body["results"][0]["vehicle"],
            "client": body["results"][0]["client"],
            "coverages": [],
        },
        {
            "licensePlate": "vt 0002",
            "licensePlateState": "Oklahoma",
            "found": True,
            "verified": True,
            "status": "ACTIVE",
            "vehicle": body["results"][1]["vehicle"],
            "client": body["results"][1]["client"],
            "coverages": body["results"][1]["coverages"],
        },
        {
            "licensePlate": "VT-0002",
            "licensePlateState": "Nevada",
            "found": False,
            "verified": False,
            "status": "NOT_FOUND",
            "vehicle": None,
            "client": None,
            "coverages": [],
        },
    ]
    assert body["results"][0]["vehicle"]["id"] == texas.id
    assert body["results"][1]["vehicle"]["id"] == oklahoma.id
    assert body["summary"] == {"requested": 3, "covered": 1, "uncovered": 1, "notFound": 1}


def test_a_bare_plate_and_the_plate_with_its_state_are_two_entries(api, two_trucks):
    texas, oklahoma = two_trucks
    body = _batch(
        api,
        [
            "VT-0002",
            {"licensePlate": "VT-0002", "licensePlateState": "OK"},
            {"licensePlate": "VT-0002"},  # no state: the bare plate again
            {"licensePlate": "VT-0002", "licensePlateState": None},
            {"licensePlate": "VT-0002", "licensePlateState": ""},
        ],
    )
    assert [(r["vehicle"]["id"], r["verified"]) for r in body["results"]] == [
        (texas.id, False),
        (oklahoma.id, True),
    ]
    assert "licensePlateState" not in body["results"][0]


def test_the_state_narrows_the_batch_as_it_narrows_the_single_lookup(api, two_trucks):
    for state in ("TX", "Oklahoma"):
        [single] = api.get(
            "/v1/coverages/vehicles", {"licensePlate": "VT-0002", "licensePlateState": state}
        ).json()["results"]
        [entry] = _batch(api, [{"licensePlate": "VT-0002", "licensePlateState": state}])["results"]
        assert (entry["vehicle"], entry["verified"], entry["coverages"]) == (
            single["vehicle"],
            single["verified"],
            single["coverages"],
        )


def test_units_of_one_plate_and_state_are_one_truck_the_covered_one_answers(
    api, agency, carrier, policy
):
    texas = State.objects.get(code="TX")
    other = ClientFactory(agency=agency, client_name="Second Owner", dot="7654321")
    VehicleFactory(client=other, license_plate="VT-0002", license_plate_state=texas)
    covered = VehicleFactory(client=carrier, license_plate="VT-0002", license_plate_state=texas)
    VehicleCoverageFactory(vehicle=covered, policy=policy)
    for plate in ("VT-0002", {"licensePlate": "VT-0002", "licensePlateState": "TX"}):
        [entry] = _batch(api, [plate])["results"]
        assert (entry["verified"], entry["vehicle"]["id"]) == (True, covered.id)
        assert "licensePlateStates" not in entry


def test_a_unit_without_a_state_counts_as_one_more_state(api, carrier, policy):
    VehicleFactory(client=carrier, license_plate="VT-0002", license_plate_state=None)
    covered = VehicleFactory(
        client=carrier, license_plate="VT-0002", license_plate_state=State.objects.get(code="TX")
    )
    VehicleCoverageFactory(vehicle=covered, policy=policy)
    [entry] = _batch(api, ["VT-0002"])["results"]
    assert entry["licensePlateStates"] == ["TX", None]
    assert entry["verified"] is False and entry["vehicle"]["licensePlateState"] is None


def test_compliance_judges_the_unit_the_entry_reports(api, two_trucks):
    texas, oklahoma = two_trucks
    body = _batch(
        api,
        ["VT-0002", {"licensePlate": "VT-0002", "licensePlateState": "OK"}],
        profile="federal-minimum",
    )
    bare, named = body["results"]
    assert bare["vehicle"]["id"] == texas.id and bare["compliance"]["result"] == "FAIL"
    assert [r["code"] for r in bare["compliance"]["reasons"]] == ["UNIT_NOT_SCHEDULED"]
    assert named["vehicle"]["id"] == oklahoma.id and named["compliance"]["result"] == "PASS"
    assert body["summary"]["compliance"] == {"pass": 1, "caution": 0, "fail": 1}


@pytest.mark.parametrize(
    ("plates", "field"),
    [
        ([{"licensePlate": "VT-0002", "state": "TX"}], "licensePlates.0.state"),
        (["A1", {"licensePlateState": "TX"}], "licensePlates.1.licensePlate"),
        ([{"licensePlate": "VT-0002", "licensePlateState": "Atlantis"}], None),
        ([{"licensePlate": "VT-0002", "licensePlateState": " "}], None),
        ([{"licensePlate": "VT-0002", "licensePlateState": 43}], None),
        (["A1", "B2", "C3", {"licensePlate": "A1", "licensePlateState": "XX"}], None),
        ([{"licensePlate": "---", "licensePlateState": "TX"}], "licensePlates.0.licensePlate"),
        ([{"licensePlate": ""}], "licensePlates.0.licensePlate"),
        ([{"licensePlate": "X" * 16}], "licensePlates.0.licensePlate"),
        ([{"licensePlate": 7}], "licensePlates.0.licensePlate"),
        ([7], "licensePlates.0"),
        ([["VT-0002", "TX"]], "licensePlates.0"),
    ],
)
def test_a_bad_plate_entry_is_a_400_naming_the_element(api, plates, field):
    if field is None:  # a bad state: the last element's
        field = f"licensePlates.{len(plates) - 1}.licensePlateState"
    body = assert_problem(api.post(BATCH, {"licensePlates": plates}, format="json"), 400)
    assert [e["field"] for e in body["errors"]] == [field]


def test_each_bad_state_is_named(api):
    plates = [
        {"licensePlate": "A1", "licensePlateState": "Atlantis"},
        {"licensePlate": "A2", "licensePlateState": "TX"},
        {"licensePlate": "A3", "licensePlateState": "Lemuria"},
    ]
    body = assert_problem(api.post(BATCH, {"licensePlates": plates}, format="json"), 400)
    assert {e["field"]: e["message"] for e in body["errors"]} == {
        "licensePlates.0.licensePlateState": "Unknown state: 'Atlantis'.",
        "licensePlates.2.licensePlateState": "Unknown state: 'Lemuria'.",
    }


def test_the_thousand_limit_counts_plate_objects(api):
    plates = [{"licensePlate": f"P{n}", "licensePlateState": "TX"} for n in range(1001)]
    assert_problem(api.post(BATCH, {"licensePlates": plates}, format="json"), 400)
    body = _batch(api, plates[:1000])
    assert body["summary"]["notFound"] == 1000


def test_batch_with_plate_states_keeps_a_constant_query_count(
    api, carrier, policy, django_assert_max_num_queries
):
    states = list(State.objects.order_by("code")[:5])
    plates = []
    for n in range(40):
        state = states[n % len(states)]
        unit = VehicleFactory(client=carrier, license_plate=f"QC-{n}", license_plate_state=state)
        VehicleCoverageFactory(vehicle=unit, policy=policy)
        plates.append({"licensePlate": f"QC-{n}", "licensePlateState": state.code})
    for state in states:  # a plate of five states: each truck is judged, none costs a query
        VehicleFactory(client=carrier, license_plate="QC-MULTI", license_plate_state=state)
    one = [plates[0], "QC-1"]
    _batch(api, one, profile="federal-minimum")
    with django_assert_max_num_queries(12) as few:
        _batch(api, one, profile="federal-minimum")
    many = (
        plates
        + [f"QC-{n}" for n in range(40)]
        + [{"licensePlate": "QC-0", "licensePlateState": s.name} for s in states]
        + ["QC-MULTI"]
    )
    with django_assert_max_num_queries(12) as lots:
        body = _batch(api, many, profile="federal-minimum")
    assert body["summary"]["requested"] == 40 + 40 + len(states) - 1 + 1
    assert len(few.captured_queries) == len(lots.captured_queries)


def test_another_agencys_unit_of_the_plate_is_no_state_of_it(api, other_api, two_trucks, rival):
    """A rival's uncovered Kansas unit of the plate neither joins our entry's states nor is
    found by naming its state; the rival's own batch sees only its unit."""
    kansas = State.objects.get(code="KS")
    theirs = VehicleFactory(client=rival, license_plate="VT-0002", license_plate_state=kansas)
    body = _batch(api, ["VT-0002", {"licensePlate": "VT-0002", "licensePlateState": "KS"}])
    bare, named = body["results"]
    assert bare["licensePlateStates"] == ["OK", "TX"]
    assert (named["found"], named["status"], named["vehicle"]) == (False, "NOT_FOUND", None)
    [entry] = _batch(other_api, ["VT-0002"])["results"]
    assert entry["vehicle"]["id"] == theirs.id and "licensePlateStates" not in entry


def test_plate_objects_need_the_verify_permission_and_credentials(make_api, powerless):
    plates = {"licensePlates": [{"licensePlate": "VT-0002", "licensePlateState": "TX"}]}
    assert_problem(make_api(powerless).post(BATCH, plates, format="json"), 403)
    assert_problem(make_api().post(BATCH, plates, format="json"), 401)


# --- a plate of several states, with a profile: the entry shows the worst-judged truck ------

PROBE_ALL = [
    {"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000.00"},
    {"kind": "coverage", "coverageType": "MTC", "minimumLimit": "100000.00"},
    {"kind": "expiration_notice", "days": 30},
]


@pytest.fixture
def probe_all(api):
    response = api.post(
        "/v1/requirement-profiles", {"name": "Probe all", "rules": PROBE_ALL}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


@pytest.fixture
def cargo(carrier):
    cargo = PolicyFactory(
        client=carrier, policy_number="MTC-1", coverage_type=CoverageType.objects.get(code="MTC")
    )
    PolicyLimit.objects.create(policy=cargo, name="Cargo Limit", amount=100_000)
    return cargo


def _truck(carrier, state: str, *policies):
    unit = VehicleFactory(
        client=carrier, license_plate="MULTI-1", license_plate_state=State.objects.get(code=state)
    )
    for scheduled_on in policies:
        VehicleCoverageFactory(vehicle=unit, policy=scheduled_on)
    return unit


def _single(api, unit, profile) -> dict:
    """The unit's own result in `GET /v1/coverages/vehicles`: the batch entry must agree."""
    response = api.get(
        "/v1/coverages/vehicles",
        {
            "licensePlate": "MULTI-1",
            "licensePlateState": unit.license_plate_state.code,
            "profile": profile,
        },
    )
    assert response.status_code == 200, response.content
    [result] = response.json()["results"]
    return result


def test_a_plate_of_several_states_passes_when_each_truck_passes(
    api, carrier, policy, cargo, probe_all
):
    texas = _truck(carrier, "TX", policy, cargo)
    _truck(carrier, "OK", policy, cargo)
    body = _batch(api, ["MULTI-1"], profile=probe_all)
    [entry] = body["results"]
    assert (entry["vehicle"]["id"], entry["verified"]) == (texas.id, True)
    assert entry["compliance"] == {"profileId": probe_all, "result": "PASS", "reasons": []}
    assert body["summary"]["compliance"] == {"pass": 1, "caution": 0, "fail": 0}


def test_a_plate_of_several_states_fails_when_one_truck_fails(
    api, carrier, policy, cargo, probe_all
):
    _truck(carrier, "TX", policy, cargo)
    oklahoma = _truck(carrier, "OK", policy)  # covered, but not scheduled on the cargo policy
    body = _batch(api, ["MULTI-1"], profile=probe_all)
    [entry] = body["results"]
    assert entry["licensePlateStates"] == ["OK", "TX"]
    assert (entry["vehicle"]["id"], entry["verified"]) == (oklahoma.id, True)
    assert entry["compliance"]["result"] == "FAIL"
    assert [(r["code"], r["coverageType"]) for r in entry["compliance"]["reasons"]] == [
        ("UNIT_NOT_SCHEDULED", "MTC")
    ]
    single = _single(api, oklahoma, probe_all)
    assert (entry["vehicle"], entry["coverages"], entry["compliance"]) == (
        single["vehicle"],
        single["coverages"],
        single["compliance"],
    )
    assert body["summary"]["compliance"] == {"pass": 0, "caution": 0, "fail": 1}


def test_a_plate_of_several_states_cautions_when_one_truck_cautions(
    api, carrier, policy, cargo, probe_all
):
    expires = today() + dt.timedelta(days=18)
    short = PolicyFactory(
        client=carrier,
        policy_number="AL-SHORT",
        effective_date=expires - dt.timedelta(days=365),
        expiration_date=expires,
    )
    PolicyLimit.objects.create(policy=short, name="Combined Single Limit", amount=1_000_000)
    _truck(carrier, "TX", policy, cargo)
    oklahoma = _truck(carrier, "OK", short, cargo)  # its auto liability expires in 18 days
    body = _batch(api, ["MULTI-1"], profile=probe_all)
    [entry] = body["results"]
    assert (entry["vehicle"]["id"], entry["verified"]) == (oklahoma.id, True)
    assert entry["compliance"]["result"] == "CAUTION"
    assert [r["code"] for r in entry["compliance"]["reasons"]] == ["EXPIRES_SOON"]
    assert entry["compliance"] == _single(api, oklahoma, probe_all)["compliance"]
    assert body["summary"]["compliance"] == {"pass": 0, "caution": 1, "fail": 0}


def test_an_uncovered_truck_still_shows_beside_a_failing_one(api, carrier, policy, probe_all):
    """Both fail (the covered one lacks cargo): among equals the gap shows, as without a
    profile, even when the failing covered truck has the lower id."""
    _truck(carrier, "OK", policy)
    texas = _truck(carrier, "TX")  # scheduled on nothing
    body = _batch(api, ["MULTI-1"], profile=probe_all)
    [entry] = body["results"]
    assert (entry["vehicle"]["id"], entry["verified"], entry["coverages"]) == (
        texas.id,
        False,
        [],
    )
    assert entry["compliance"]["result"] == "FAIL"
    assert entry["compliance"] == _single(api, texas, probe_all)["compliance"]
    assert body["summary"]["compliance"] == {"pass": 0, "caution": 0, "fail": 1}
    assert (body["summary"]["covered"], body["summary"]["uncovered"]) == (0, 1)
