"""The federal minimum (49 CFR 387.9) is judged on a policy's auto-liability amount only: its
Combined Single Limit, else the highest of its split liability lines (bodily injury per
person, per accident, property damage), else none. No other line (physical damage, cargo,
medical, aggregates) is liability cover: contract section 15."""

from __future__ import annotations

import pytest

from apps.compliance.models import RequirementProfile
from apps.masterdata.models import CoverageType
from apps.policies.models import PolicyLimit
from apps.webhooks.models import Webhook
from tests.factories import PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db
FED = "federal-minimum"
VIN = "1FUJGLDR7CLBP8834"


def _al(client, *limits: tuple[str, str]):
    policy = PolicyFactory(client=client, coverage_type=CoverageType.objects.get(code="AL"))
    for name, amount in limits:
        PolicyLimit.objects.create(policy=policy, name=name, amount=amount)
    return policy


def _client_verdict(api, dot="1234567") -> dict:
    response = api.get(f"/v1/coverages/clients?dot={dot}&profile={FED}")
    assert response.status_code == 200, response.content
    [result] = response.json()["results"]
    return result["compliance"]


def _unit_verdicts(api) -> list[dict]:
    """The unit's verdict from the vehicle check and from the batch."""
    one = api.get(f"/v1/coverages/vehicles?vin={VIN}&profile={FED}")
    assert one.status_code == 200, one.content
    batch = api.post("/v1/coverages/vehicles/batch", {"vins": [VIN], "profile": FED}, format="json")
    assert batch.status_code == 200, batch.content
    return [one.json()["results"][0]["compliance"], batch.json()["results"][0]["compliance"]]


def _federal(compliance) -> tuple:
    return (
        compliance["result"],
        [(r["code"], r["required"], r["actual"]) for r in compliance["reasons"]],
    )


NOT_LIABILITY = [
    "Physical Damage (Stated Value)",
    "Cargo Limit",
    "Medical Expense",
    "Occupational Accident",
    "General Aggregate",
    "Aggregate",
]


@pytest.mark.parametrize("name", NOT_LIABILITY)
def test_a_line_that_is_not_liability_never_meets_the_federal_minimum(api, carrier, name):
    policy = _al(carrier, (name, "5000000"))
    VehicleCoverageFactory(vehicle=VehicleFactory(client=carrier, serial_number=VIN), policy=policy)
    failing = ("FAIL", [("BELOW_FEDERAL_MINIMUM", "750000.00", None)])
    compliance = _client_verdict(api)
    assert _federal(compliance) == failing
    assert compliance["reasons"][0]["message"] == (
        "Auto liability none is below the federal minimum 750000.00 for GENERAL_FREIGHT "
        "(49 CFR 387.9)."
    )
    assert [_federal(c) for c in _unit_verdicts(api)] == [failing, failing]


def test_an_aggregate_beside_a_split_line_is_no_liability_amount(api, carrier):
    _al(carrier, ("Aggregate", "5000000"), ("Bodily Injury (Per Person)", "100000"))
    assert _federal(_client_verdict(api)) == (
        "FAIL",
        [("BELOW_FEDERAL_MINIMUM", "750000.00", None)],  # no property damage line
    )


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ([("Combined Single Limit", "750000")], ("PASS", [])),
        (
            [("Combined Single Limit", "749999.99")],
            ("FAIL", [("BELOW_FEDERAL_MINIMUM", "750000.00", "749999.99")]),
        ),
        # The Combined Single Limit is the amount when there is one, whatever else is listed.
        (
            [("Combined Single Limit", "500000"), ("Physical Damage (Stated Value)", "5000000")],
            ("FAIL", [("BELOW_FEDERAL_MINIMUM", "750000.00", "500000.00")]),
        ),
        (
            [("Combined Single Limit", "750000"), ("Bodily Injury (Per Accident)", "300000")],
            ("PASS", []),
        ),
        # Split limits meet it when every line does: an accident of 750,000 is paid in full
        # however it splits (all to one injured person, all property damage).
        (
            [("Bodily Injury (Per Accident)", "750000"), ("Property Damage", "750000")],
            ("PASS", []),
        ),
        (
            [
                ("Bodily Injury (Per Person)", "1000000"),
                ("Bodily Injury (Per Accident)", "1000000"),
                ("Property Damage", "750000"),
            ],
            ("PASS", []),
        ),
        # A per-person line of 750,000 beside a per-accident of 100,000: 150,000 an accident.
        (
            [
                ("Bodily Injury (Per Person)", "750000"),
                ("Bodily Injury (Per Accident)", "100000"),
                ("Property Damage", "50000"),
            ],
            ("FAIL", [("BELOW_FEDERAL_MINIMUM", "750000.00", "50000.00")]),
        ),
        # 500,000 / 250,000: an accident of 600,000 of bodily injury is not paid in full.
        (
            [("Bodily Injury (Per Accident)", "500000"), ("Property Damage", "250000")],
            ("FAIL", [("BELOW_FEDERAL_MINIMUM", "750000.00", "250000.00")]),
        ),
        (
            [
                ("Bodily Injury (Per Person)", "250000"),
                ("Bodily Injury (Per Accident)", "500000"),
                ("Property Damage", "100000"),
                ("Cargo Limit", "5000000"),
            ],
            ("FAIL", [("BELOW_FEDERAL_MINIMUM", "750000.00", "100000.00")]),
        ),
        # A split with no property damage line, or no bodily-injury line, covers no accident.
        (
            [("Bodily Injury (Per Accident)", "1000000")],
            ("FAIL", [("BELOW_FEDERAL_MINIMUM", "750000.00", None)]),
        ),
        (
            [("Property Damage", "750000")],
            ("FAIL", [("BELOW_FEDERAL_MINIMUM", "750000.00", None)]),
        ),
        # Deductibles and retentions are never cover.
        (
            [("Deductible", "5000000"), ("Bodily Injury (Per Person)", "100000")],
            ("FAIL", [("BELOW_FEDERAL_MINIMUM", "750000.00", None)]),
        ),
    ],
)
def test_the_liability_amount_is_the_csl_else_the_lowest_line_of_a_whole_split(
    api, carrier, limits, expected
):
    policy = _al(carrier, *limits)
    VehicleCoverageFactory(vehicle=VehicleFactory(client=carrier, serial_number=VIN), policy=policy)
    assert _federal(_client_verdict(api)) == expected
    assert [_federal(c) for c in _unit_verdicts(api)] == [expected, expected]


def test_the_coverage_rules_default_is_still_the_highest_limit(api, carrier):
    # A `coverage` rule without `limitName` compares the highest limit (contract section 15);
    # the same policy fails the federal minimum, judged on liability only.
    rules = [
        {"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000.00"},
        {"kind": "federal_minimum"},
    ]
    response = api.post("/v1/requirement-profiles", {"name": "Both", "rules": rules}, format="json")
    assert response.status_code == 201, response.content
    _al(carrier, ("Physical Damage (Stated Value)", "5000000"))
    [result] = api.get(f"/v1/coverages/clients?dot=1234567&profile={response.json()['id']}").json()[
        "results"
    ]
    assert _federal(result["compliance"]) == (
        "FAIL",
        [("BELOW_FEDERAL_MINIMUM", "750000.00", None)],
    )


def test_a_limit_change_that_flips_the_federal_verdict_emits_compliance_changed(
    api, carrier, agency
):
    profile = RequirementProfile.objects.get(agency=agency, built_in=True).id
    Webhook.objects.create(
        agency=agency, url="https://receiver.example/hook", profile_id=profile, secret="whsec_x"
    )
    policy = _al(carrier, ("Combined Single Limit", "1000000"))

    def put_limits(*limits):
        body = {"limits": [{"name": n, "amount": a} for n, a in limits]}
        response = api.put(f"/v1/policies/{policy.id}", body, format="json")
        assert response.status_code == 200, response.content
        response = api.get("/v1/events?type=compliance.changed")
        assert response.status_code == 200, response.content
        return [e["data"] for e in response.json()["results"]]

    [failed] = put_limits(("Physical Damage (Stated Value)", "5000000.00"))
    assert (failed["profileId"], failed["from"], failed["to"]) == (profile, "PASS", "FAIL")
    assert [(r["code"], r["actual"]) for r in failed["reasons"]] == [
        ("BELOW_FEDERAL_MINIMUM", None)
    ]
    split = (("Bodily Injury (Per Accident)", "1000000.00"), ("Property Damage", "1000000.00"))
    events = put_limits(("Physical Damage (Stated Value)", "5000000.00"), *split)
    assert sorted((e["from"], e["to"]) for e in events) == [("FAIL", "PASS"), ("PASS", "FAIL")]
    # Another line that is not liability changes nothing: no event.
    assert len(put_limits(*split, ("Cargo Limit", "1"))) == 2
