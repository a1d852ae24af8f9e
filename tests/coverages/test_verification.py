"""Real-time verification: spec section 4, contract section 8."""

from __future__ import annotations

import datetime as dt
from unittest import mock

import pytest

from apps.core.dates import today
from apps.coverages import selectors
from apps.coverages.services import VEHICLE, coverage_update
from apps.policies.models import PolicyLimit
from tests.conftest import assert_problem
from tests.coverages.conftest import VIN
from tests.factories import (
    ClientFactory,
    PolicyFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


# --- clients ---------------------------------------------------------------------------------


def test_covered_dot_is_verified_with_client_and_coverages(api, carrier, covered):
    body = api.get("/v1/coverages/clients?dot=1234567").json()
    assert body["asOf"] == today().isoformat()
    [result] = body["results"]
    assert result["status"] == "ACTIVE" and result["verified"] is True and result["found"]
    assert result["client"] == {
        "id": carrier.id,
        "clientName": "Lone Star Freight",
        "dot": "1234567",
        "agencyId": carrier.agency_id,
        "agencyName": "Demo Agency",
    }
    [coverage] = result["coverages"]
    assert coverage["policyNumber"] == "AL-1" and coverage["coverageType"] == "AL"
    assert coverage["insurerName"] == "Great West Casualty Company"
    assert coverage["naic"] == "11371"
    assert coverage["limits"] == [{"name": "Combined Single Limit", "amount": "1000000.00"}]


def test_client_without_policy_in_force_is_inactive(api, carrier):
    PolicyFactory(client=carrier, effective_date=today() - 400 * DAY, expiration_date=today() - DAY)
    [result] = api.get("/v1/coverages/clients?dot=1234567").json()["results"]
    assert (result["status"], result["verified"], result["found"]) == ("INACTIVE", False, True)


def test_by_client_id(api, carrier, covered):
    [result] = api.get(f"/v1/coverages/clients?id={carrier.id}").json()["results"]
    assert result["verified"] is True and result["dot"] == "1234567"
    assert_problem(api.get("/v1/coverages/clients?id=999999"), 404)


def test_dots_in_request_order_duplicates_once_missing_not_found(api, agency, carrier, covered):
    ClientFactory(agency=agency, dot="2345678")
    body = api.get(
        "/v1/coverages/clients?dots=2345678&dots=9999999&dots=1234567&dots=2345678"
    ).json()
    assert [(r["dot"], r["status"]) for r in body["results"]] == [
        ("2345678", "INACTIVE"),
        ("9999999", "NOT_FOUND"),
        ("1234567", "ACTIVE"),
    ]


def test_dots_comma_separated(api, carrier, covered):
    body = api.get("/v1/coverages/clients?dots=1234567,7777777").json()
    assert [r["status"] for r in body["results"]] == ["ACTIVE", "NOT_FOUND"]


EMPTY_DOT = "Empty DOT number in dots (a blank value, or nothing between two commas)."


@pytest.mark.parametrize(
    "query",
    [
        "dots=1234567&dots=",
        "dots=&dots=1234567",
        "dots=1234567&dots=%20",
        "dots=%20",
        "dots=%2C",
        "dots=1234567,",
        "dots=,1234567",
        "dots=1234567,,7777777",
        "dots=1234567,%20",
        "dots=1234567&dots=7777777,",
    ],
)
def test_an_empty_dot_among_dots_is_a_400_on_dots(api, carrier, covered, query):
    body = assert_problem(api.get(f"/v1/coverages/clients?{query}"), 400)
    assert [(e["field"], e["message"]) for e in body["errors"]] == [("dots", EMPTY_DOT)]


@pytest.mark.parametrize(
    "query", ["", "dots=", "dots=&dots=", "dots=1234567&dot=1234567", "dots=1234567&dots=&id=1"]
)
def test_exactly_one_kind_is_asked_for_only_when_not_one_is_sent(api, carrier, covered, query):
    body = assert_problem(api.get(f"/v1/coverages/clients?{query}"), 400)
    assert [e["message"] for e in body["errors"]] == ["Send exactly one of 'dots', 'dot', 'id'."]


def test_not_found_answers(api):
    assert_problem(api.get("/v1/coverages/clients?dot=1111111"), 404)
    assert_problem(api.get("/v1/coverages/clients?dots=1111111&dots=2222222"), 404)


def test_other_agency_dot_is_not_found(api, other_agency):
    rival = ClientFactory(agency=other_agency, dot="7654321")
    PolicyFactory(client=rival)
    assert_problem(api.get("/v1/coverages/clients?dot=7654321"), 404)
    assert_problem(api.get(f"/v1/coverages/clients?id={rival.id}"), 404)


def test_other_agency_dot_among_many_is_not_found(api, carrier, covered, other_agency):
    rival = ClientFactory(agency=other_agency, dot="7654321")
    PolicyFactory(client=rival)
    results = api.get("/v1/coverages/clients?dots=1234567&dots=7654321").json()["results"]
    assert [(r["dot"], r["status"], r["client"] and r["client"]["id"]) for r in results] == [
        ("1234567", "ACTIVE", carrier.id),
        ("7654321", "NOT_FOUND", None),
    ]


def test_deleted_client_leaves_verification(api, carrier, covered):
    api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json")
    assert_problem(api.get("/v1/coverages/clients?dot=1234567"), 404)


@pytest.mark.parametrize(
    "query",
    [
        "",
        "dot=1&id=1",
        "dot=1&dots=1",
        "dots=1&id=1",
        "dot=12a",
        "dot=123456789",
        "dots=1&dots=x",
        "id=abc",
        "id=0",
        "dot=1&asOf=tomorrow",
        "dot=1&asOf=2026-02-30",
        # strptime reads any script's digits; a date's are ASCII (contract 13, as a DOT's).
        "dot=1&asOf=%EF%BC%92026-11-27",
        "dot=1&asOf=2026-11-%D9%A27",
        "dot=1&asOf=11-27-%EF%BC%92026",
        # and exactly its digits, as a date in a body
        "dot=1&asOf=2026-2-28",
        "dot=1&asOf=2-28-2026",
    ],
)
def test_bad_client_queries_are_400(api, query):
    assert_problem(api.get(f"/v1/coverages/clients?{query}"), 400)


def test_more_than_500_dots_is_400(api):
    query = "&".join(f"dots={n}" for n in range(1, 502))
    assert_problem(api.get(f"/v1/coverages/clients?{query}"), 400)


@pytest.mark.parametrize(
    ("offset", "expected"),
    [(-1, "INACTIVE"), (0, "ACTIVE"), (99, "ACTIVE"), (100, "INACTIVE")],
)
def test_in_force_boundaries(api, carrier, offset, expected):
    start = today() - 50 * DAY
    PolicyFactory(client=carrier, effective_date=start, expiration_date=start + 100 * DAY)
    as_of = (start + offset * DAY).isoformat()
    [result] = api.get(f"/v1/coverages/clients?dot=1234567&asOf={as_of}").json()["results"]
    assert result["status"] == expected, as_of


def test_not_in_force_on_or_after_cancellation(api, carrier):
    PolicyFactory(client=carrier, cancellation_date=today())
    for as_of, expected in (
        (today() - DAY, "ACTIVE"),
        (today(), "INACTIVE"),
        (today() + DAY, "INACTIVE"),
    ):
        [result] = api.get(f"/v1/coverages/clients?dot=1234567&asOf={as_of.isoformat()}").json()[
            "results"
        ]
        assert result["status"] == expected, as_of


def test_as_of_accepts_mm_dd_yyyy_and_is_echoed(api, carrier, covered):
    body = api.get(f"/v1/coverages/clients?dot=1234567&asOf={today():%m-%d-%Y}").json()
    assert body["asOf"] == today().isoformat()


def test_query_count_is_the_same_for_one_and_five_hundred_dots(
    api, agency, django_assert_max_num_queries
):
    for n in range(60):
        client = ClientFactory(agency=agency, dot=str(5_000_000 + n))
        for _ in range(3):
            PolicyFactory(client=client)
    api.get("/v1/coverages/clients?dot=5000000")
    # One DOT: the caller's statement, then the client with its policies and limits in one.
    with django_assert_max_num_queries(2):
        api.get("/v1/coverages/clients?dot=5000000")
    api.get("/v1/coverages/clients?dots=5000000&dots=5000001")
    with django_assert_max_num_queries(10) as two:
        assert (
            len(api.get("/v1/coverages/clients?dots=5000000&dots=5000001").json()["results"]) == 2
        )
    many = "&".join(f"dots={5_000_000 + n}" for n in range(500))
    with django_assert_max_num_queries(10) as five_hundred:
        assert len(api.get(f"/v1/coverages/clients?{many}").json()["results"]) == 500
    assert len(two.captured_queries) == len(five_hundred.captured_queries)


def test_query_count_is_the_same_for_one_and_fifty_policies(
    api, agency, django_assert_max_num_queries
):
    small, large = ClientFactory(agency=agency, dot="1"), ClientFactory(agency=agency, dot="2")
    PolicyFactory(client=small)
    for _ in range(50):
        policy = PolicyFactory(client=large)
        PolicyLimit.objects.create(policy=policy, name="Each Occurrence", amount=1)
    api.get("/v1/coverages/clients?dot=1")
    with django_assert_max_num_queries(10) as one:
        api.get("/v1/coverages/clients?dot=1")
    with django_assert_max_num_queries(10) as fifty:
        assert len(api.get("/v1/coverages/clients?dot=2").json()["results"][0]["coverages"]) == 50
    assert len(one.captured_queries) == len(fifty.captured_queries)


def test_verification_needs_view_permissions(make_api, powerless, carrier):
    assert_problem(make_api(powerless).get("/v1/coverages/clients?dot=1234567"), 403)
    assert_problem(make_api(powerless).get(f"/v1/coverages/vehicles?vin={VIN}"), 403)


# --- vehicles --------------------------------------------------------------------------------


def test_covered_vin(api, covered):
    policy, unit = covered
    body = api.get(f"/v1/coverages/vehicles?vin={VIN.lower()}").json()
    [result] = body["results"]
    assert result["status"] == "ACTIVE" and result["verified"] is True
    assert result["vehicle"]["id"] == unit.id and result["vehicle"]["vin"] == VIN
    assert result["client"]["dot"] == "1234567"
    [coverage] = result["coverages"]
    assert coverage["policyId"] == policy.id
    assert coverage["coverageStatus"] == 4
    assert coverage["policyAddedDate"] == policy.effective_date.isoformat()


@pytest.mark.parametrize("plate", ["TX-4821A", "tx 4821a", "TX4821A"])
def test_by_plate_ignoring_case_spaces_and_dashes(api, covered, plate):
    [result] = api.get(f"/v1/coverages/vehicles?licensePlate={plate}").json()["results"]
    assert result["verified"] is True


def test_plate_state_narrows(api, covered):
    assert (
        api.get("/v1/coverages/vehicles?licensePlate=TX-4821A&licensePlateState=TX").status_code
        == 200
    )
    assert_problem(
        api.get("/v1/coverages/vehicles?licensePlate=TX-4821A&licensePlateState=OK"), 404
    )
    assert_problem(
        api.get("/v1/coverages/vehicles?licensePlate=TX-4821A&licensePlateState=Narnia"), 400
    )


@pytest.mark.parametrize("plate", ["---", ".", "*", "__", "%25", " - "])
def test_a_plate_without_a_letter_or_digit_is_400_not_every_unit_without_a_plate(
    api, covered, plate
):
    # A unit without a plate, covered: its plate's key is empty, as "---"'s would be.
    policy, _unit = covered
    plateless = VehicleFactory(client=policy.client, license_plate="")
    VehicleCoverageFactory(vehicle=plateless, policy=policy)
    message = ["A plate has a letter or a digit."]
    for path in ("/v1/coverages/vehicles", "/v1/certificates/vehicles"):
        body = assert_problem(api.get(f"{path}?licensePlate={plate}"), 400)
        assert [(e["field"], [e["message"]]) for e in body["errors"]] == [("licensePlate", message)]
    sent = {"%25": "%"}.get(plate, plate)  # the query string's "%25" is "%"
    body = assert_problem(
        api.post(
            "/v1/coverages/vehicles/batch", {"licensePlates": ["TX-4821A", sent]}, format="json"
        ),
        400,
    )
    assert [e["field"] for e in body["errors"]] == ["licensePlates.1"]


# Each dropped, a letter or digit of another script left plate 171745: verified.
FOREIGN_PLATES = [
    "\u0416\u0416171745",  # Cyrillic ЖЖ
    "\u0422\u0425-171745",  # Cyrillic Te and Ha, written like TX
    "\u216b171745",  # Roman numeral Ⅻ
    "\u00e9171745",  # é
    "e\u0301171745",  # e and a combining acute accent
    "171745\u03a9",  # Greek Ω
    "\u00b2171745",  # superscript two
    "\u017f171745",  # long s, upper-cased to S
]


@pytest.mark.parametrize("plate", FOREIGN_PLATES)
def test_a_plate_with_another_scripts_letter_or_digit_is_400_not_the_plate_without_it(
    api, carrier, plate
):
    policy = PolicyFactory(client=carrier)
    VehicleCoverageFactory(
        vehicle=VehicleFactory(client=carrier, license_plate="171745"), policy=policy
    )
    [found] = api.get("/v1/coverages/vehicles", {"licensePlate": "171-745"}).json()["results"]
    assert found["verified"] is True
    message = "A plate is written with the letters A-Z and the digits 0-9; separators are ignored."
    for path in ("/v1/coverages/vehicles", "/v1/certificates/vehicles"):
        body = assert_problem(api.get(path, {"licensePlate": plate}), 400)
        assert [(e["field"], e["message"]) for e in body["errors"]] == [("licensePlate", message)]
    body = assert_problem(
        api.post(
            "/v1/coverages/vehicles/batch", {"licensePlates": ["171745", plate]}, format="json"
        ),
        400,
    )
    assert [(e["field"], e["message"]) for e in body["errors"]] == [("licensePlates.1", message)]


def test_a_vin_lookup_ignores_the_plate_state(api, covered):
    for state in ("OK", "Narnia"):
        response = api.get(f"/v1/coverages/vehicles?vin={VIN}&licensePlateState={state}")
        [result] = response.json()["results"]
        assert result["verified"] is True, state


def test_unit_removed_yesterday_is_not_covered_today_but_was_last_week(api, manager, covered):
    policy, unit = covered
    coverage_update(
        user=manager,
        subject=VEHICLE,
        target_id=unit.id,
        policy_id=policy.id,
        coverage_status=1,
        policy_removed_date=today() - DAY,
    )
    [today_result] = api.get(f"/v1/coverages/vehicles?vin={VIN}").json()["results"]
    assert today_result["status"] == "INACTIVE" and today_result["coverages"] == []
    last_week = (today() - 7 * DAY).isoformat()
    [past] = api.get(f"/v1/coverages/vehicles?vin={VIN}&asOf={last_week}").json()["results"]
    assert past["status"] == "ACTIVE"
    # On that day the unit was scheduled: the coverage says so, not what it became since.
    [coverage] = past["coverages"]
    assert (coverage["coverageStatus"], coverage["coverageStatusName"]) == (
        4,
        "Sponsored scheduled unit",
    )


@pytest.mark.parametrize("status", [1, 2])
def test_a_removal_or_decline_still_ahead_leaves_the_unit_scheduled_until_it_comes(
    api, manager, covered, status
):
    policy, unit = covered
    coverage_update(
        user=manager,
        subject=VEHICLE,
        target_id=unit.id,
        policy_id=policy.id,
        coverage_status=status,
        policy_removed_date=today() + 3 * DAY,
    )
    for as_of in (today() - DAY, today(), today() + 2 * DAY):
        query = f"vin={VIN}&asOf={as_of.isoformat()}"
        [single] = api.get(f"/v1/coverages/vehicles?{query}").json()["results"]
        batch = api.post(
            "/v1/coverages/vehicles/batch",
            {"vins": [VIN], "asOf": as_of.isoformat()},
            format="json",
        )
        [listed] = batch.json()["results"]
        for result in (single, listed):
            assert result["status"] == "ACTIVE", as_of
            assert [c["coverageStatus"] for c in result["coverages"]] == [4], as_of
    ended = (today() + 3 * DAY).isoformat()
    [result] = api.get(f"/v1/coverages/vehicles?vin={VIN}&asOf={ended}").json()["results"]
    assert (result["status"], result["coverages"]) == ("INACTIVE", [])


def test_declined_unit_is_not_covered(api, manager, covered):
    policy, unit = covered
    coverage_update(
        user=manager,
        subject=VEHICLE,
        target_id=unit.id,
        policy_id=policy.id,
        coverage_status=2,
    )
    [result] = api.get(f"/v1/coverages/vehicles?vin={VIN}").json()["results"]
    assert result["status"] == "INACTIVE"


def test_unit_added_later_is_not_covered_before(api, carrier):
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier, serial_number=VIN)
    VehicleCoverageFactory(vehicle=unit, policy=policy, policy_added_date=today())
    yesterday = (today() - DAY).isoformat()
    [result] = api.get(f"/v1/coverages/vehicles?vin={VIN}&asOf={yesterday}").json()["results"]
    assert result["status"] == "INACTIVE"


def test_unit_on_expired_policy_is_not_covered(api, carrier):
    policy = PolicyFactory(
        client=carrier, effective_date=today() - 400 * DAY, expiration_date=today() - DAY
    )
    VehicleCoverageFactory(vehicle=VehicleFactory(client=carrier, serial_number=VIN), policy=policy)
    [result] = api.get(f"/v1/coverages/vehicles?vin={VIN}").json()["results"]
    assert result["status"] == "INACTIVE"


def test_other_agency_vin_is_not_found(api, other_agency):
    rival = ClientFactory(agency=other_agency)
    VehicleCoverageFactory(
        vehicle=VehicleFactory(client=rival, serial_number=VIN), policy=PolicyFactory(client=rival)
    )
    assert_problem(api.get(f"/v1/coverages/vehicles?vin={VIN}"), 404)


@pytest.mark.parametrize(
    "query",
    [
        "",
        f"vin={VIN}&licensePlate=X",
        "vin=SHORT",
        f"vin={VIN}X",
        "vin=1FUJGLDR7CLBP883O",
        f"vin={VIN}&asOf=nope",
    ],
)
def test_bad_vehicle_queries_are_400(api, query):
    assert_problem(api.get(f"/v1/coverages/vehicles?{query}"), 400)


# Upper-cased, the ligature ff (U+FB00) is FF (16 characters matched 17) and the long s is S.
LOOKALIKE_VINS = ["1\ufb00ABXRZS3AKPB3T3", "1ffABXRZ\u017f3AKPB3T3"]


@pytest.mark.parametrize("vin", LOOKALIKE_VINS)
def test_a_vin_beyond_ascii_is_400_not_the_vin_it_upper_cases_to(api, carrier, vin):
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier, serial_number="1FFABXRZS3AKPB3T3")
    VehicleCoverageFactory(vehicle=unit, policy=policy)
    assert api.get("/v1/coverages/vehicles", {"vin": "1ffabxrzs3akpb3t3"}).status_code == 200
    for path in ("/v1/coverages/vehicles", "/v1/certificates/vehicles"):
        body = assert_problem(api.get(path, {"vin": vin}), 400)
        assert [e["field"] for e in body["errors"]] == ["vin"]
    body = assert_problem(
        api.post("/v1/coverages/vehicles/batch", {"vins": [vin]}, format="json"), 400
    )
    assert [e["field"] for e in body["errors"]] == ["vins.0"]


def test_unknown_vin_is_404(api):
    assert_problem(api.get(f"/v1/coverages/vehicles?vin={VIN}"), 404)


# --- fleet gap check -------------------------------------------------------------------------


def test_batch_reports_each_unit_and_a_summary(api, carrier, covered):
    _policy, _ = covered
    idle = VehicleFactory(client=carrier, serial_number="1XKYDP9X5MJ441234")
    response = api.post(
        "/v1/coverages/vehicles/batch",
        {
            "vins": [VIN, "1XKYDP9X5MJ441234", "3AKJHHDR5LSLA1234", VIN],
            "licensePlates": ["tx 4821a", "NOPE-1"],
        },
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert [(r.get("vin") or r.get("licensePlate"), r["status"]) for r in body["results"]] == [
        (VIN, "ACTIVE"),
        ("1XKYDP9X5MJ441234", "INACTIVE"),
        ("3AKJHHDR5LSLA1234", "NOT_FOUND"),
        ("tx 4821a", "ACTIVE"),
        ("NOPE-1", "NOT_FOUND"),
    ]
    assert body["results"][1]["vehicle"]["id"] == idle.id
    assert body["summary"] == {"requested": 5, "covered": 2, "uncovered": 1, "notFound": 2}


def test_batch_answers_a_plate_once_however_it_is_spelt_as_a_vin(api, covered):
    response = api.post(
        "/v1/coverages/vehicles/batch",
        {
            "vins": [VIN, VIN.lower()],
            "licensePlates": ["tx 4821a", "TX-4821A", "NOPE-1", "nope 1", "TX4821A"],
        },
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert [(r.get("vin") or r.get("licensePlate"), r["status"]) for r in body["results"]] == [
        (VIN, "ACTIVE"),
        ("tx 4821a", "ACTIVE"),  # the first spelling sent
        ("NOPE-1", "NOT_FOUND"),
    ]
    assert body["summary"] == {"requested": 3, "covered": 2, "uncovered": 0, "notFound": 1}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"vins": []},
        {"vins": ["BAD"]},
        {"vins": "not-a-list"},
        {"licensePlates": [""]},
        {"vins": [VIN] * 600, "licensePlates": ["A"] * 401},
        {"vins": [VIN], "asOf": "x"},
        {"vins": [VIN], "asOf": 20260601},
        {"vins": [VIN], "asOf": "2026-06-01T00:00:00Z"},
    ],
)
def test_bad_batches_are_400(api, body):
    assert_problem(api.post("/v1/coverages/vehicles/batch", body, format="json"), 400)


def test_the_batch_reads_as_of_as_the_query_does(api, covered):
    # Spaces around are ignored and an empty value is today, as `?asOf=` answers.
    last_week = (today() - 7 * DAY).isoformat()
    for sent, echoed in (
        (f"  {last_week}  ", last_week),
        ("", today().isoformat()),
        (None, today().isoformat()),
        (f"{(today() - 7 * DAY):%m-%d-%Y}", last_week),
    ):
        single = api.get("/v1/coverages/vehicles", {"vin": VIN, "asOf": sent or ""})
        batch = api.post(
            "/v1/coverages/vehicles/batch", {"vins": [VIN], "asOf": sent}, format="json"
        )
        assert batch.status_code == single.status_code == 200, (sent, batch.content)
        assert batch.json()["asOf"] == single.json()["asOf"] == echoed


def test_batch_query_count_is_constant(api, carrier, django_assert_max_num_queries):
    policy = PolicyFactory(client=carrier)
    vins = []
    for _n in range(40):
        unit = VehicleFactory(client=carrier)
        VehicleCoverageFactory(vehicle=unit, policy=policy)
        vins.append(unit.serial_number)
    api.post("/v1/coverages/vehicles/batch", {"vins": vins[:1]}, format="json")
    with django_assert_max_num_queries(10) as one:
        api.post("/v1/coverages/vehicles/batch", {"vins": vins[:1]}, format="json")
    thousand = vins + [f"1HGCM82633A{n:06d}" for n in range(960)]
    with django_assert_max_num_queries(10) as many:
        body = api.post("/v1/coverages/vehicles/batch", {"vins": thousand}, format="json").json()
    assert body["summary"] == {"requested": 1000, "covered": 40, "uncovered": 0, "notFound": 960}
    assert len(one.captured_queries) == len(many.captured_queries)


def test_batch_never_shows_other_agency_units(api, other_agency):
    rival = ClientFactory(agency=other_agency)
    VehicleFactory(client=rival, serial_number=VIN)
    body = api.post("/v1/coverages/vehicles/batch", {"vins": [VIN]}, format="json").json()
    assert body["results"][0]["status"] == "NOT_FOUND"


@pytest.fixture
def uncovered_twin(agency):
    """Another client's unit with the VIN of `covered`'s, added before it (a lower id)."""
    other = ClientFactory(agency=agency, client_name="Second Owner", dot="7654321")
    VehicleFactory(client=other, serial_number="3AKJHHDR5LSLA1234", license_plate="")
    return VehicleFactory(client=other, serial_number=VIN, license_plate="")


def test_batch_answers_the_covered_one_of_units_sharing_a_vin(api, uncovered_twin, covered):
    _, unit = covered
    assert uncovered_twin.id < unit.id
    body = {"vins": [VIN, "3AKJHHDR5LSLA1234"]}
    results = api.post("/v1/coverages/vehicles/batch", body, format="json").json()["results"]
    first, second = results
    assert (first["vin"], first["verified"], first["vehicle"]["id"]) == (VIN, True, unit.id)
    assert (second["found"], second["verified"], second["status"]) == (True, False, "INACTIVE")


def test_batch_without_a_profile_judges_no_unit(api, carrier, covered):
    # Compliance is computed only when a profile is named: no verdict, and no list of each
    # unit's policies built for one (issue 18).
    with mock.patch.object(selectors, "_compliance", wraps=selectors._compliance) as judged:
        body = api.post("/v1/coverages/vehicles/batch", {"vins": [VIN]}, format="json").json()
    assert body["results"][0]["verified"] and "compliance" not in body["results"][0]
    assert judged.call_count == 0
    with mock.patch.object(selectors, "_compliance", wraps=selectors._compliance) as judged:
        body = api.post(
            "/v1/coverages/vehicles/batch",
            {"vins": [VIN], "profile": "federal-minimum"},
            format="json",
        ).json()
    assert body["results"][0]["compliance"]["result"] and judged.call_count == 1
