"""Compliance verdicts at verification time: contract section 15."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.compliance.models import RequirementProfile
from apps.core.dates import today
from apps.coverages.services import VEHICLE, coverage_update
from apps.masterdata.models import CoverageType, Insurer
from apps.policies.models import PolicyLimit
from tests.conftest import assert_problem
from tests.factories import (
    ClientFactory,
    PolicyFactory,
    UserFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)
PROFILES = "/v1/requirement-profiles"
SHIPPER_RULES = [
    {"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000.00"},
    {"kind": "coverage", "coverageType": "MTC", "minimumLimit": "100000.00"},
    {"kind": "insurer_rating", "minimum": "A-"},
    {"kind": "expiration_notice", "days": 30},
    {"kind": "federal_minimum"},
]


def _rated(rating: str) -> Insurer:
    insurer = Insurer.objects.get_or_create(
        name="Great West Casualty Company",
        defaults={"name_key": "great west casualty company", "naic": "11371"},
    )[0]
    insurer.am_best_rating = rating
    insurer.save()
    return insurer


def _policy(client, code="AL", amount="1000000", limit="Combined Single Limit", **extra):
    extra.setdefault("insurer", _rated("A+"))
    policy = PolicyFactory(
        client=client, coverage_type=CoverageType.objects.get(code=code), **extra
    )
    if amount is not None:
        PolicyLimit.objects.create(policy=policy, name=limit, amount=amount)
    return policy


def _profile(api, rules, name="Contract") -> int:
    response = api.post(PROFILES, {"name": name, "rules": rules}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def _check(api, profile, dot="1234567", **params) -> dict:
    query = "&".join(f"{k}={v}" for k, v in {"dot": dot, "profile": profile, **params}.items())
    response = api.get(f"/v1/coverages/clients?{query}")
    assert response.status_code == 200, response.content
    [result] = response.json()["results"]
    return result["compliance"]


def _codes(compliance) -> list[tuple[str, str]]:
    return [(r["code"], r["coverageType"]) for r in compliance["reasons"]]


@pytest.fixture
def shipper(api):
    return _profile(api, SHIPPER_RULES, "Shipper contract")


@pytest.fixture
def compliant(carrier):
    _policy(carrier, "AL", "1000000")
    _policy(carrier, "MTC", "100000", limit="Cargo Limit")


def test_pass_has_no_reasons_and_names_the_profile(api, carrier, compliant, shipper):
    assert _check(api, shipper) == {"profileId": shipper, "result": "PASS", "reasons": []}


def test_profile_by_code(api, carrier, compliant, shipper):
    assert _check(api, "shipper-contract")["profileId"] == shipper


def test_without_profile_there_is_no_compliance(api, carrier, compliant):
    [result] = api.get("/v1/coverages/clients?dot=1234567").json()["results"]
    assert "compliance" not in result


def test_coverages_show_the_insurer_rating(api, carrier, compliant):
    [result] = api.get("/v1/coverages/clients?dot=1234567").json()["results"]
    assert {c["amBestRating"] for c in result["coverages"]} == {"A+"}


def test_missing_coverage_fails(api, carrier, shipper):
    _policy(carrier, "AL", "1000000")
    compliance = _check(api, shipper)
    assert compliance["result"] == "FAIL"
    [reason] = compliance["reasons"]
    assert reason == {
        "code": "COVERAGE_MISSING",
        "coverageType": "MTC",
        "required": "100000.00",
        "actual": None,
        "message": f"No MTC policy in force on {today().isoformat()}.",
    }


def test_expired_or_cancelled_coverage_is_missing(api, carrier, shipper):
    _policy(carrier, "AL", effective_date=today() - 400 * DAY, expiration_date=today() - DAY)
    _policy(carrier, "MTC", "100000", limit="Cargo Limit", cancellation_date=today())
    compliance = _check(api, shipper)
    assert compliance["result"] == "FAIL"
    assert _codes(compliance) == [("COVERAGE_MISSING", "AL"), ("COVERAGE_MISSING", "MTC")]


def test_limit_below_minimum_fails(api, carrier, shipper):
    _policy(carrier, "AL", "1000000")
    _policy(carrier, "MTC", "50000", limit="Cargo Limit")
    compliance = _check(api, shipper)
    assert compliance["result"] == "FAIL"
    [reason] = compliance["reasons"]
    assert (reason["code"], reason["required"], reason["actual"]) == (
        "LIMIT_BELOW_MINIMUM",
        "100000.00",
        "50000.00",
    )


def test_named_limit_is_compared_and_deductible_never_counts(api, carrier):
    profile = _profile(
        api,
        [
            {
                "kind": "coverage",
                "coverageType": "GL",
                "minimumLimit": "2000000",
                "limitName": "General Aggregate",
            },
            {"kind": "coverage", "coverageType": "APD", "minimumLimit": "10000"},
        ],
    )
    gl = _policy(carrier, "GL", "1000000", limit="Each Occurrence")
    PolicyLimit.objects.create(policy=gl, name="General Aggregate", amount="2000000")
    _policy(carrier, "APD", "50000", limit="Deductible")
    compliance = _check(api, profile)
    [reason] = compliance["reasons"]
    assert (reason["code"], reason["coverageType"], reason["actual"]) == (
        "LIMIT_BELOW_MINIMUM",
        "APD",
        None,
    )


def test_the_better_of_two_policies_answers(api, carrier, shipper):
    _policy(carrier, "AL", "500000")
    _policy(carrier, "AL", "1000000")
    _policy(carrier, "MTC", "100000", limit="Cargo Limit")
    assert _check(api, shipper)["result"] == "PASS"


@pytest.mark.parametrize(
    ("cargo_class", "amount", "result"),
    [
        ("GENERAL_FREIGHT", "750000", "PASS"),
        ("GENERAL_FREIGHT", "749999.99", "FAIL"),
        ("OIL", "750000", "FAIL"),
        ("OIL", "1000000", "PASS"),
        ("HAZMAT", "1000000", "PASS"),
        ("HAZMAT_BULK", "1000000", "FAIL"),
        ("HAZMAT_BULK", "5000000", "PASS"),
    ],
)
def test_federal_minimum_by_cargo_class(api, carrier, cargo_class, amount, result):
    response = api.put(f"/v1/clients/{carrier.id}", {"cargoClass": cargo_class}, format="json")
    assert response.status_code == 200 and response.json()["cargoClass"] == cargo_class
    _policy(carrier, "AL", amount)
    compliance = _check(api, "federal-minimum")
    assert compliance["result"] == result
    if result == "FAIL":
        [reason] = compliance["reasons"]
        floors = {"GENERAL_FREIGHT": "750000.00", "OIL": "1000000.00", "HAZMAT_BULK": "5000000.00"}
        assert (reason["code"], reason["coverageType"], reason["required"]) == (
            "BELOW_FEDERAL_MINIMUM",
            "AL",
            floors[cargo_class],
        )


def test_federal_minimum_without_auto_liability_is_missing(api, carrier):
    compliance = _check(api, "federal-minimum")
    assert compliance["result"] == "FAIL"
    [reason] = compliance["reasons"]
    assert (reason["code"], reason["required"]) == ("COVERAGE_MISSING", "750000.00")


@pytest.mark.parametrize(
    ("cargo_class", "required"),
    [("GENERAL_FREIGHT", "1000000.00"), ("HAZMAT", "1000000.00"), ("HAZMAT_BULK", "5000000.00")],
)
def test_missing_coverage_requires_the_binding_minimum(api, carrier, cargo_class, required):
    """A missing auto liability stands for both limit requirements: `required` is the higher
    of the rule's minimum and the federal floor."""
    profile = _profile(
        api,
        [
            {"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000"},
            {"kind": "federal_minimum"},
        ],
    )
    response = api.put(f"/v1/clients/{carrier.id}", {"cargoClass": cargo_class}, format="json")
    assert response.status_code == 200, response.content
    [reason] = _check(api, profile)["reasons"]
    assert (reason["code"], reason["required"]) == ("COVERAGE_MISSING", required)


def test_limits_below_both_requirements_name_each(api, carrier):
    """With a policy, each requirement answers for itself: the rule's minimum (compared on its
    limit) and the federal floor (on the Combined Single Limit), the higher binding."""
    profile = _profile(
        api,
        [
            {"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000"},
            {"kind": "federal_minimum"},
        ],
    )
    api.put(f"/v1/clients/{carrier.id}", {"cargoClass": "HAZMAT_BULK"}, format="json")
    al = _policy(carrier, "AL", "500000")
    required = [(r["code"], r["required"]) for r in _check(api, profile)["reasons"]]
    assert required == [
        ("LIMIT_BELOW_MINIMUM", "1000000.00"),
        ("BELOW_FEDERAL_MINIMUM", "5000000.00"),
    ]
    PolicyLimit.objects.filter(policy=al).update(amount="2000000")
    required = [(r["code"], r["required"]) for r in _check(api, profile)["reasons"]]
    assert required == [("BELOW_FEDERAL_MINIMUM", "5000000.00")]


def test_new_clients_default_to_general_freight(api, agency):
    body = api.post(
        "/v1/clients", {"clientName": "New", "agencyId": agency.id, "dot": "55"}, format="json"
    ).json()
    assert body["cargoClass"] == "GENERAL_FREIGHT"
    bad = api.put(f"/v1/clients/{body['id']}", {"cargoClass": "PLUTONIUM"}, format="json")
    assert {e["field"] for e in assert_problem(bad, 400)["errors"]} == {"cargoClass"}


@pytest.mark.parametrize(
    ("rating", "code"),
    [("B++", "INSURER_RATING_BELOW_MINIMUM"), ("", "INSURER_UNRATED"), ("S", None)],
)
def test_insurer_rating_cautions(api, carrier, compliant, shipper, rating, code):
    _rated(rating)
    compliance = _check(api, shipper)
    assert compliance["result"] == "CAUTION"
    expected = code or "INSURER_RATING_BELOW_MINIMUM"
    assert _codes(compliance) == [(expected, "AL"), (expected, "MTC")]
    assert compliance["reasons"][0]["required"] == "A-"
    assert compliance["reasons"][0]["actual"] == (rating or None)


def test_rating_at_the_minimum_passes(api, carrier, compliant, shipper):
    _rated("A-")
    assert _check(api, shipper)["result"] == "PASS"


def test_endorsements_caution(api, carrier):
    profile = _profile(
        api,
        [
            {"kind": "coverage", "coverageType": "GL"},
            {"kind": "additional_insured"},
            {"kind": "waiver_of_subrogation"},
        ],
    )
    gl = _policy(carrier, "GL", "1000000", limit="Each Occurrence")
    compliance = _check(api, profile)
    assert compliance["result"] == "CAUTION"
    assert _codes(compliance) == [
        ("ADDITIONAL_INSURED_MISSING", "GL"),
        ("WAIVER_OF_SUBROGATION_MISSING", "GL"),
    ]
    response = api.put(
        f"/v1/policies/{gl.id}",
        {"additionalInsured": True, "subrogationWaived": True},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert _check(api, profile)["result"] == "PASS"


def test_expiring_soon_cautions_unless_renewed(api, carrier, shipper):
    expires = today() + 20 * DAY
    al = _policy(carrier, "AL", effective_date=expires - 365 * DAY, expiration_date=expires)
    _policy(carrier, "MTC", "100000", limit="Cargo Limit")
    compliance = _check(api, shipper)
    assert compliance["result"] == "CAUTION"
    [reason] = compliance["reasons"]
    assert (reason["code"], reason["coverageType"], reason["required"], reason["actual"]) == (
        "EXPIRES_SOON",
        "AL",
        "30 days",
        expires.isoformat(),
    )
    # The passage of time alone: 31 days before the expiration it passed.
    assert _check(api, shipper, asOf=(expires - 31 * DAY).isoformat())["result"] == "PASS"
    _policy(
        carrier,
        "AL",
        effective_date=al.expiration_date,
        expiration_date=al.expiration_date + 365 * DAY,
    )
    assert _check(api, shipper)["result"] == "PASS"


def test_a_renewal_short_of_the_limits_does_not_silence_the_notice(api, carrier, shipper):
    # The renewal on file carries $100,000 where the profile needs $1,000,000 (and the
    # federal floor $750,000): the day it starts, the verdict fails. Until then the notice
    # says so, instead of a PASS that a renewal on file alone earned.
    expires = today() + 20 * DAY
    _policy(carrier, "AL", effective_date=expires - 365 * DAY, expiration_date=expires)
    _policy(carrier, "MTC", "100000", limit="Cargo Limit")
    short = _policy(
        carrier, "AL", "100000", effective_date=expires, expiration_date=expires + 365 * DAY
    )
    compliance = _check(api, shipper)
    assert compliance["result"] == "CAUTION"
    [reason] = compliance["reasons"]
    assert (reason["code"], reason["message"]) == (
        "EXPIRES_SOON",
        f"The AL policy expires on {expires.isoformat()}, in 20 days; its renewal falls short "
        "of the required limits.",
    )
    assert _check(api, shipper, asOf=expires.isoformat())["result"] == "FAIL"
    # Raised to the requirement, the renewal takes over: no notice.
    response = api.put(
        f"/v1/policies/{short.id}",
        {"limits": [{"name": "Combined Single Limit", "amount": "1000000.00"}]},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert _check(api, shipper)["result"] == "PASS"


def test_a_cancellation_to_come_cautions_like_an_expiration(api, carrier, shipper):
    al = _policy(carrier, "AL")  # expires in 265 days: no notice yet
    _policy(carrier, "MTC", "100000", limit="Cargo Limit")
    assert _check(api, shipper)["result"] == "PASS"
    cancelled = today() + 8 * DAY
    response = api.put(
        f"/v1/policies/{al.id}", {"cancellationDate": cancelled.isoformat()}, format="json"
    )
    assert response.status_code == 200 and response.json()["status"] == "ACTIVE"

    compliance = _check(api, shipper)
    assert compliance["result"] == "CAUTION"
    [reason] = compliance["reasons"]
    assert (reason["code"], reason["actual"], reason["message"]) == (
        "EXPIRES_SOON",
        cancelled.isoformat(),
        f"The AL policy is cancelled from {cancelled.isoformat()}, in 8 days, with no renewal "
        "on file.",
    )
    # A policy of the line taking over on the cancellation date covers it, as a renewal does.
    _policy(carrier, "AL", effective_date=cancelled, expiration_date=cancelled + 365 * DAY)
    assert _check(api, shipper)["result"] == "PASS"


def test_a_coverage_ending_tomorrow_says_in_1_day(api, carrier, shipper):
    cancelled = today() + DAY
    _policy(carrier, "AL", cancellation_date=cancelled)
    _policy(carrier, "MTC", "100000", limit="Cargo Limit")
    [reason] = _check(api, shipper)["reasons"]
    assert reason["message"] == (
        f"The AL policy is cancelled from {cancelled.isoformat()}, in 1 day, with no renewal "
        "on file."
    )


def test_a_one_day_notice_requires_1_day(api, carrier):
    profile = _profile(
        api,
        [{"kind": "coverage", "coverageType": "AL"}, {"kind": "expiration_notice", "days": 1}],
    )
    cancelled = today() + DAY
    _policy(carrier, "AL", cancellation_date=cancelled)
    [reason] = _check(api, profile)["reasons"]
    assert (reason["code"], reason["required"], reason["message"]) == (
        "EXPIRES_SOON",
        "1 day",
        f"The AL policy is cancelled from {cancelled.isoformat()}, in 1 day, with no renewal "
        "on file.",
    )


NOTICE_RULES = [
    {"kind": "coverage", "coverageType": "AL"},
    {"kind": "expiration_notice", "days": 30},
]


def _client_doors(api, profile, client, **params) -> list[dict]:
    """The client's verdict by DOT, among several DOTs and by client id: one rule, so one
    answer."""
    extra = "".join(f"&{k}={v}" for k, v in params.items())
    answers = []
    for query in (f"dot={client.dot}", f"dots={client.dot}&dots=9999999", f"id={client.id}"):
        response = api.get(f"/v1/coverages/clients?{query}&profile={profile}{extra}")
        assert response.status_code == 200, response.content
        answers.append(response.json()["results"][0]["compliance"])
    return answers


def test_a_renewal_that_ends_within_the_notice_does_not_silence_it(api, carrier):
    # The policy expires in 18 days and its renewal 4 days later, nothing after it: the
    # coverage lapses within the 30 days' notice, so the renewal on file does not earn a PASS.
    profile = _profile(api, NOTICE_RULES, "Chain check")
    expires = today() + 18 * DAY
    _policy(carrier, "AL", effective_date=expires - 365 * DAY, expiration_date=expires)
    lapses = expires + 4 * DAY
    _policy(carrier, "AL", effective_date=expires, expiration_date=lapses)
    expected = {
        "profileId": profile,
        "result": "CAUTION",
        "reasons": [
            {
                "code": "EXPIRES_SOON",
                "coverageType": "AL",
                "required": "30 days",
                "actual": lapses.isoformat(),
                "message": f"The AL policy's renewal expires on {lapses.isoformat()}, in 22 days, "
                "with no further renewal on file.",
            }
        ],
    }
    assert _client_doors(api, profile, carrier) == [expected] * 3
    # A policy taking over from the renewal for a year: the chain reaches past the notice.
    _policy(carrier, "AL", effective_date=lapses, expiration_date=lapses + 365 * DAY)
    assert [c["result"] for c in _client_doors(api, profile, carrier)] == ["PASS"] * 3


LAST_DAY = dt.date.max  # 9999-12-31


def _every_door(api, profile, client, vin, on: dt.date) -> list[dict]:
    """The verdict at `on` by each door: the client (by DOT, among DOTs, by id), its unit by
    VIN and in the batch."""
    answers = _client_doors(api, profile, client, asOf=on.isoformat())
    response = api.get(f"/v1/coverages/vehicles?vin={vin}&profile={profile}&asOf={on}")
    assert response.status_code == 200, response.content
    answers.append(response.json()["results"][0]["compliance"])
    body = {"vins": [vin], "profile": profile, "asOf": on.isoformat()}
    response = api.post("/v1/coverages/vehicles/batch", body, format="json")
    assert response.status_code == 200, response.content
    answers.append(response.json()["results"][0]["compliance"])
    return answers


def test_a_notice_reaching_past_the_last_date_is_a_verdict_not_a_500(api, carrier):
    # Covered until 9999-12-31: the notice's horizon (D + 30 days) is past the last date a
    # date can hold, so it stops there.
    profile = _profile(api, NOTICE_RULES, "Chain check")
    policy = _policy(carrier, "AL", expiration_date=LAST_DAY)
    unit = VehicleFactory(client=carrier)
    VehicleCoverageFactory(vehicle=unit, policy=policy)
    day_before = LAST_DAY - DAY
    expected = {
        "profileId": profile,
        "result": "CAUTION",
        "reasons": [
            {
                "code": "EXPIRES_SOON",
                "coverageType": "AL",
                "required": "30 days",
                "actual": "9999-12-31",
                "message": "The AL policy expires on 9999-12-31, in 1 day, with no renewal on "
                "file.",
            }
        ],
    }
    assert _every_door(api, profile, carrier, unit.serial_number, day_before) == [expected] * 5
    # On the last day nothing is in force (a policy covers up to the day before it expires).
    for compliance in _every_door(api, profile, carrier, unit.serial_number, LAST_DAY):
        assert (compliance["result"], _codes(compliance)) == (
            "FAIL",
            [("COVERAGE_MISSING", "AL")],
        )


def test_a_chain_of_renewals_ending_on_the_last_date_is_followed_to_it(api, carrier):
    profile = _profile(api, NOTICE_RULES, "Chain check")
    renewed = dt.date(9999, 12, 20)
    first = _policy(carrier, "AL", expiration_date=renewed)
    renewal = _policy(carrier, "AL", effective_date=renewed, expiration_date=LAST_DAY)
    unit = VehicleFactory(client=carrier)
    VehicleCoverageFactory(vehicle=unit, policy=first)
    VehicleCoverageFactory(vehicle=unit, policy=renewal)
    on = dt.date(9999, 12, 10)
    for compliance in _every_door(api, profile, carrier, unit.serial_number, on):
        [reason] = compliance["reasons"]
        assert (compliance["result"], reason["message"]) == (
            "CAUTION",
            "The AL policy's renewal expires on 9999-12-31, in 21 days, with no further "
            "renewal on file.",
        )


def test_a_notice_on_the_first_date_is_a_verdict(api, carrier):
    profile = _profile(api, NOTICE_RULES, "Chain check")
    first_day = dt.date.min  # 0001-01-01
    policy = _policy(carrier, "AL", effective_date=first_day, expiration_date=first_day + 10 * DAY)
    unit = VehicleFactory(client=carrier)
    VehicleCoverageFactory(vehicle=unit, policy=policy)
    for compliance in _every_door(api, profile, carrier, unit.serial_number, first_day):
        [reason] = compliance["reasons"]
        assert (compliance["result"], reason["actual"]) == ("CAUTION", "0001-01-11")


def test_a_renewal_cancelled_within_the_notice_does_not_silence_it(api, carrier):
    profile = _profile(api, NOTICE_RULES, "Chain check")
    expires = today() + 18 * DAY
    _policy(carrier, "AL", effective_date=expires - 365 * DAY, expiration_date=expires)
    cancelled = expires + 10 * DAY
    _policy(
        carrier,
        "AL",
        effective_date=expires,
        expiration_date=expires + 365 * DAY,
        cancellation_date=cancelled,
    )
    compliance = _check(api, profile)
    assert compliance["result"] == "CAUTION"
    [reason] = compliance["reasons"]
    assert (reason["code"], reason["actual"], reason["message"]) == (
        "EXPIRES_SOON",
        cancelled.isoformat(),
        f"The AL policy's renewal is cancelled from {cancelled.isoformat()}, in 28 days, with "
        "no further renewal on file.",
    )


def test_a_chain_of_renewals_is_followed_to_its_end(api, carrier, shipper):
    # Three policies end to end, each short, the last of the line short of the limits: the
    # coverage that meets the profile ends with the second renewal.
    expires = today() + 5 * DAY
    _policy(carrier, "MTC", "100000", limit="Cargo Limit")
    _policy(carrier, "AL", effective_date=expires - 365 * DAY, expiration_date=expires)
    _policy(carrier, "AL", effective_date=expires, expiration_date=expires + 5 * DAY)
    lapses = expires + 12 * DAY
    _policy(carrier, "AL", effective_date=expires + 3 * DAY, expiration_date=lapses)
    _policy(carrier, "AL", "100000", effective_date=lapses, expiration_date=lapses + 365 * DAY)
    [reason] = _check(api, shipper)["reasons"]
    assert (reason["code"], reason["actual"], reason["message"]) == (
        "EXPIRES_SOON",
        lapses.isoformat(),
        f"The AL policy's renewal expires on {lapses.isoformat()}, in 17 days; the renewal "
        "after it falls short of the required limits.",
    )


def test_hard_and_soft_together_fail(api, carrier, shipper):
    _policy(carrier, "AL", "1000000")
    _rated("B")
    compliance = _check(api, shipper)
    assert compliance["result"] == "FAIL"
    assert set(_codes(compliance)) == {
        ("INSURER_RATING_BELOW_MINIMUM", "AL"),
        ("COVERAGE_MISSING", "MTC"),
    }


# --- vehicles ----------------------------------------------------------------------------


@pytest.fixture
def fleet(carrier):
    al = _policy(carrier, "AL", "1000000")
    _policy(carrier, "MTC", "100000", limit="Cargo Limit")
    scheduled = VehicleFactory(client=carrier, serial_number="1FUJGLDR7CLBP8834")
    unscheduled = VehicleFactory(client=carrier, serial_number="3AKJHHDR5LSLA1234")
    VehicleCoverageFactory(vehicle=scheduled, policy=al)
    return al, scheduled, unscheduled


def _unit(api, vin, profile) -> dict:
    response = api.get(f"/v1/coverages/vehicles?vin={vin}&profile={profile}")
    assert response.status_code == 200, response.content
    [result] = response.json()["results"]
    return result["compliance"]


def test_vehicle_not_scheduled_fails(api, fleet):
    profile = _profile(api, [{"kind": "coverage", "coverageType": "AL"}])
    assert _unit(api, "1FUJGLDR7CLBP8834", profile)["result"] == "PASS"
    compliance = _unit(api, "3AKJHHDR5LSLA1234", profile)
    assert compliance["result"] == "FAIL"
    assert _codes(compliance) == [("UNIT_NOT_SCHEDULED", "AL")]


def test_vehicle_removed_from_the_policy_is_not_scheduled(api, manager, fleet):
    al, scheduled, _ = fleet
    coverage_update(
        user=manager,
        subject=VEHICLE,
        target_id=scheduled.id,
        policy_id=al.id,
        coverage_status=1,
        policy_removed_date=today() - DAY,
    )
    compliance = _unit(api, "1FUJGLDR7CLBP8834", "federal-minimum")
    assert _codes(compliance) == [("UNIT_NOT_SCHEDULED", "AL")]


def test_vehicle_coverage_that_schedules_no_units_is_the_clients(api, carrier, fleet):
    profile = _profile(api, [{"kind": "coverage", "coverageType": "GL"}])
    assert _codes(_unit(api, "1FUJGLDR7CLBP8834", profile)) == [("COVERAGE_MISSING", "GL")]
    _policy(carrier, "GL", "1000000", limit="Each Occurrence")
    assert _unit(api, "1FUJGLDR7CLBP8834", profile)["result"] == "PASS"


def test_vehicle_under_a_profile_with_cargo_is_not_scheduled_on_cargo(api, fleet, shipper):
    compliance = _unit(api, "1FUJGLDR7CLBP8834", shipper)
    assert _codes(compliance) == [("UNIT_NOT_SCHEDULED", "MTC")]


def test_a_renewal_the_unit_is_not_scheduled_on_does_not_take_over_for_it(api, carrier):
    """The unit is judged on the policies it is scheduled on: the client's renewal silences
    the notice for the client, not for a unit that the renewal does not schedule."""
    profile = _profile(
        api,
        [
            {"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000.00"},
            {"kind": "expiration_notice", "days": 30},
        ],
        "Repro notice",
    )
    expires = today() + 18 * DAY
    current = _policy(carrier, "AL", effective_date=expires - 365 * DAY, expiration_date=expires)
    renewal = _policy(carrier, "AL", effective_date=expires, expiration_date=expires + 365 * DAY)
    unit = VehicleFactory(client=carrier, serial_number="1FUJGLDR7CLBP8834")
    VehicleCoverageFactory(vehicle=unit, policy=current)
    compliance = _unit(api, unit.serial_number, profile)
    assert compliance["result"] == "CAUTION"
    [reason] = compliance["reasons"]
    assert (reason["code"], reason["message"]) == (
        "EXPIRES_SOON",
        f"The AL policy expires on {expires.isoformat()}, in 18 days, with no renewal on file.",
    )
    batch = api.post(
        "/v1/coverages/vehicles/batch",
        {"vins": [unit.serial_number], "profile": profile},
        format="json",
    )
    assert batch.status_code == 200, batch.content
    assert batch.json()["results"][0]["compliance"] == compliance
    assert _check(api, profile)["result"] == "PASS"  # the client has its renewal
    scheduled = api.post(
        "/v1/vehicles/coverages", {"vehicleId": unit.id, "policyId": renewal.id}, format="json"
    )
    assert scheduled.status_code == 201, scheduled.content
    assert _unit(api, unit.serial_number, profile)["result"] == "PASS"


def _unit_doors(api, profile, unit) -> list[dict]:
    """The unit's verdict by VIN and in the fleet gap check: one rule, so one answer."""
    by_vin = _unit(api, unit.serial_number, profile)
    batch = api.post(
        "/v1/coverages/vehicles/batch",
        {"vins": [unit.serial_number], "profile": profile},
        format="json",
    )
    assert batch.status_code == 200, batch.content
    return [by_vin, batch.json()["results"][0]["compliance"]]


def test_a_units_removal_within_the_notice_cautions(api, carrier):
    """A removal already set ends the unit's coverage as an expiration ends the policy's: the
    notice comes before the day it fails as not scheduled."""
    profile = _profile(api, NOTICE_RULES, "Chain check")
    al = _policy(carrier, "AL")  # expires in about 265 days
    unit = VehicleFactory(client=carrier, serial_number="1FUJGLDR7CLBP8834")
    VehicleCoverageFactory(vehicle=unit, policy=al)
    assert [c["result"] for c in _unit_doors(api, profile, unit)] == ["PASS"] * 2
    removed = today() + 10 * DAY
    response = api.put(
        "/v1/vehicles/coverages",
        {
            "vehicleId": unit.id,
            "policyId": al.id,
            "coverageStatus": 1,
            "policyRemovedDate": removed.isoformat(),
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    expected = {
        "profileId": profile,
        "result": "CAUTION",
        "reasons": [
            {
                "code": "EXPIRES_SOON",
                "coverageType": "AL",
                "required": "30 days",
                "actual": removed.isoformat(),
                "message": f"This unit is removed from the AL policy on {removed.isoformat()}, "
                "in 10 days, with no renewal on file.",
            }
        ],
    }
    assert _unit_doors(api, profile, unit) == [expected] * 2
    assert _check(api, profile)["result"] == "PASS"  # the client keeps its policy
    later = api.get(
        f"/v1/coverages/vehicles?vin={unit.serial_number}&profile={profile}"
        f"&asOf={removed.isoformat()}"
    ).json()["results"][0]["compliance"]
    assert _codes(later) == [("UNIT_NOT_SCHEDULED", "AL")]


def test_a_units_chain_follows_the_policies_it_is_scheduled_on(api, carrier):
    profile = _profile(api, NOTICE_RULES, "Chain check")
    expires = today() + 18 * DAY
    current = _policy(carrier, "AL", effective_date=expires - 365 * DAY, expiration_date=expires)
    lapses = expires + 4 * DAY
    renewal = _policy(carrier, "AL", effective_date=expires, expiration_date=lapses)
    unit = VehicleFactory(client=carrier, serial_number="1FUJGLDR7CLBP8834")
    VehicleCoverageFactory(vehicle=unit, policy=current)
    scheduled = api.post(
        "/v1/vehicles/coverages", {"vehicleId": unit.id, "policyId": renewal.id}, format="json"
    )
    assert scheduled.status_code == 201, scheduled.content
    expected = {
        "profileId": profile,
        "result": "CAUTION",
        "reasons": [
            {
                "code": "EXPIRES_SOON",
                "coverageType": "AL",
                "required": "30 days",
                "actual": lapses.isoformat(),
                "message": f"The AL policy's renewal expires on {lapses.isoformat()}, in 22 days, "
                "with no further renewal on file.",
            }
        ],
    }
    assert _unit_doors(api, profile, unit) == [expected] * 2
    # The client's next policy takes over for the unit only once it schedules the unit.
    following = _policy(carrier, "AL", effective_date=lapses, expiration_date=lapses + 365 * DAY)
    assert _check(api, profile)["result"] == "PASS"
    assert _unit_doors(api, profile, unit) == [expected] * 2
    scheduled = api.post(
        "/v1/vehicles/coverages", {"vehicleId": unit.id, "policyId": following.id}, format="json"
    )
    assert scheduled.status_code == 201, scheduled.content
    assert [c["result"] for c in _unit_doors(api, profile, unit)] == ["PASS"] * 2


def test_batch_carries_compliance_and_a_summary(api, fleet, shipper):
    body = {
        "vins": ["1FUJGLDR7CLBP8834", "3AKJHHDR5LSLA1234", "1HGCM82633A004352"],
        "profile": "federal-minimum",
    }
    response = api.post("/v1/coverages/vehicles/batch", body, format="json")
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [r["compliance"] and r["compliance"]["result"] for r in results] == [
        "PASS",
        "FAIL",
        None,
    ]
    assert response.json()["summary"]["compliance"] == {"pass": 1, "caution": 0, "fail": 1}
    by_id = api.post(
        "/v1/coverages/vehicles/batch", {**body, "profile": shipper}, format="json"
    ).json()
    assert by_id["results"][0]["compliance"]["profileId"] == shipper


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["nope", "999999", "0", "x" * 60, "federal_minimum"])
def test_unknown_profile_is_400_on_profile(api, carrier, profile):
    body = assert_problem(api.get(f"/v1/coverages/clients?dot=1234567&profile={profile}"), 400)
    assert {e["field"] for e in body["errors"]} == {"profile"}


def test_another_agencys_profile_is_400(api, other_api, carrier, compliant):
    other = _profile(other_api, SHIPPER_RULES)
    for url in (
        f"/v1/coverages/clients?dot=1234567&profile={other}",
        f"/v1/coverages/vehicles?vin=1FUJGLDR7CLBP8834&profile={other}",
    ):
        body = assert_problem(api.get(url), 400)
        assert {e["field"] for e in body["errors"]} == {"profile"}
    body = assert_problem(
        api.post(
            "/v1/coverages/vehicles/batch",
            {"vins": ["1FUJGLDR7CLBP8834"], "profile": other},
            format="json",
        ),
        400,
    )
    assert {e["field"] for e in body["errors"]} == {"profile"}


@pytest.mark.parametrize("profile", [True, [], {}, ""])
def test_malformed_batch_profile_is_400(api, carrier, profile):
    body = {"vins": ["1FUJGLDR7CLBP8834"], "profile": profile}
    response = api.post("/v1/coverages/vehicles/batch", body, format="json")
    assert {e["field"] for e in assert_problem(response, 400)["errors"]} == {"profile"}


def test_profile_needs_permission_to_view_profiles(make_api, groups, agency, carrier):
    from django.contrib.auth.models import Permission

    user = UserFactory(username="verifier", agencies=[agency])
    user.user_permissions.set(
        Permission.objects.filter(
            codename__in=["view_client", "view_policy"],
            content_type__app_label__in=["clients", "policies"],
        )
    )
    client = make_api(user)
    assert client.get("/v1/coverages/clients?dot=1234567").status_code == 200
    assert_problem(client.get("/v1/coverages/clients?dot=1234567&profile=federal-minimum"), 403)


def test_code_for_a_user_of_several_agencies_means_each_clients_own(
    make_api, groups, agency, other_agency, carrier, rival
):
    both = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[1]])
    results = (
        make_api(both)
        .get("/v1/coverages/clients?dots=1234567&dots=7654321&profile=federal-minimum")
        .json()["results"]
    )
    own = dict(RequirementProfile.objects.filter(built_in=True).values_list("agency_id", "id"))
    assert [r["compliance"]["profileId"] for r in results] == [own[agency.id], own[other_agency.id]]


def test_not_found_dots_have_null_compliance(api, carrier, compliant, shipper):
    results = api.get(f"/v1/coverages/clients?dots=1234567&dots=9999999&profile={shipper}").json()[
        "results"
    ]
    assert [r["compliance"] and r["compliance"]["result"] for r in results] == ["PASS", None]


# --- query counts ------------------------------------------------------------------------


def test_query_count_is_constant_in_dots_with_a_profile(
    api, agency, shipper, django_assert_max_num_queries
):
    for n in range(60):
        client = ClientFactory(agency=agency, dot=str(5_000_000 + n))
        _policy(client, "AL", "1000000")
        _policy(client, "MTC", "50000", limit="Cargo Limit")
    url = f"/v1/coverages/clients?profile={shipper}&"
    api.get(url + "dot=5000000")
    with django_assert_max_num_queries(12) as one:
        assert api.get(url + "dot=5000000").json()["results"][0]["compliance"]["result"] == "FAIL"
    two = "dots=5000000&dots=5000001"
    api.get(url + two)
    with django_assert_max_num_queries(12) as pair:
        assert len(api.get(url + two).json()["results"]) == 2
    many = "&".join(f"dots={5_000_000 + n}" for n in range(500))
    with django_assert_max_num_queries(12) as five_hundred:
        results = api.get(url + many).json()["results"]
    assert sum(r["compliance"] is not None for r in results) == 60
    # One DOT reads its client, policies and limits in one statement, two DOTs or more in two
    # (the clients with their policies, then the limits).
    assert len(one.captured_queries) == len(five_hundred.captured_queries) - 1
    assert len(pair.captured_queries) == len(five_hundred.captured_queries)
    with django_assert_max_num_queries(12) as plain:
        api.get("/v1/coverages/clients?" + many)
    assert len(five_hundred.captured_queries) - len(plain.captured_queries) <= 2


def test_query_count_is_constant_in_units_with_a_profile(
    api, carrier, shipper, django_assert_max_num_queries
):
    al = _policy(carrier, "AL", "1000000")
    vins = []
    for _n in range(40):
        unit = VehicleFactory(client=carrier)
        VehicleCoverageFactory(vehicle=unit, policy=al)
        vins.append(unit.serial_number)
    url = "/v1/coverages/vehicles/batch"
    api.post(url, {"vins": vins[:1], "profile": shipper}, format="json")
    with django_assert_max_num_queries(14) as one:
        api.post(url, {"vins": vins[:1], "profile": shipper}, format="json")
    thousand = vins + [f"1HGCM82633A{n:06d}" for n in range(960)]
    with django_assert_max_num_queries(14) as many:
        body = api.post(url, {"vins": thousand, "profile": shipper}, format="json").json()
    assert body["summary"]["compliance"] == {"pass": 0, "caution": 0, "fail": 40}
    assert len(one.captured_queries) == len(many.captured_queries)
    with django_assert_max_num_queries(14) as single:
        api.get(f"/v1/coverages/vehicles?vin={vins[0]}&profile={shipper}")
    assert len(single.captured_queries) <= len(one.captured_queries)
