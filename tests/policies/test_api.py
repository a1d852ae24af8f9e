"""Policies: spec section 4, contract sections 4, 6, 7 and 8 (status)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from apps.core.dates import today
from apps.coverages.models import VehicleCoverage
from apps.policies.models import Policy
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import (
    ClientFactory,
    PolicyFactory,
    ProducerFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


def payload(client, **extra):
    return {
        "clientId": client.id,
        "effectiveDate": "2026-01-01",
        "expirationDate": "2027-01-01",
        "coverageType": "AL",
        **extra,
    }


def test_create_resolves_names_and_limits(api, carrier, agency):
    ProducerFactory(agency=agency, name="Demo Producer")
    by_names = payload(
        carrier,
        coverageType=None,
        fullCoverageTypeName="auto physical damage",
        policyNumber=" APD-1 ",
        insurerName="Northland Insurance Company",
        stateName="tx",
        producerName="demo producer",
        limits=[{"name": "Deductible", "amount": "2500"}],
        premium="1234.5",
    )
    response = api.post("/v1/policies", by_names, format="json")
    assert response.status_code == 400  # the insurer is not in master data yet
    assert "insurerName" in field_errors(response.json())
    from apps.masterdata.models import Insurer

    Insurer.objects.create(name="Northland Insurance Company", naic="24015")
    response = api.post("/v1/policies", by_names, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"].endswith(f"/v1/policies/{body['id']}")
    assert body["coverageType"] == "APD"
    assert body["fullCoverageTypeName"] == "Auto Physical Damage"
    assert body["policyNumber"] == "APD-1"
    assert body["insurerName"] == "Northland Insurance Company" and body["naic"] == "24015"
    assert body["stateName"] == "Texas"
    assert body["producerName"] == "Demo Producer"
    assert body["limits"] == [{"name": "Deductible", "amount": "2500.00"}]
    assert body["premium"] == "1234.50"
    assert body["status"] in {"ACTIVE", "EXPIRED", "FUTURE"}


def test_create_accepts_mm_dd_yyyy_dates(api, carrier):
    response = api.post(
        "/v1/policies",
        payload(carrier, effectiveDate="01-01-2026", expirationDate="01-01-2027"),
        format="json",
    )
    assert response.status_code == 201
    assert response.json()["effectiveDate"] == "2026-01-01"


@pytest.mark.parametrize("missing", ["clientId", "effectiveDate", "expirationDate", "coverageType"])
def test_create_requires_fields(api, carrier, missing):
    body = payload(carrier)
    del body[missing]
    errors = field_errors(assert_problem(api.post("/v1/policies", body, format="json"), 400))
    assert missing in errors


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"expirationDate": "2025-12-31"}, "expirationDate"),
        ({"expirationDate": "2026-01-01"}, "expirationDate"),
        ({"effectiveDate": "2026-13-01"}, "effectiveDate"),
        # strptime reads any script's digits; a date's are ASCII (as asOf's, a DOT's)
        ({"effectiveDate": "\uff12026-01-01"}, "effectiveDate"),
        ({"expirationDate": "01-01-\uff12027"}, "expirationDate"),
        # and exactly its digits: strptime reads unpadded parts (2026-3-1 as 2026-03-01)
        ({"effectiveDate": "2026-3-1"}, "effectiveDate"),
        ({"effectiveDate": "2026-03-1"}, "effectiveDate"),
        ({"effectiveDate": "3-01-2026"}, "effectiveDate"),
        ({"expirationDate": "01-1-2027"}, "expirationDate"),
        ({"expirationDate": "01-01-27"}, "expirationDate"),
        ({"cancellationDate": "2026-6-01"}, "cancellationDate"),
        ({"coverageType": "XX"}, "coverageType"),
        ({"stateName": "Atlantis"}, "stateName"),
        ({"producerName": "Nobody"}, "producerName"),
        ({"cancellationDate": "2025-06-01"}, "cancellationDate"),
        ({"limits": [{"name": "Bogus", "amount": "1"}]}, "limits.0.name"),
        ({"limits": [{"name": "Deductible", "amount": "-1"}]}, "limits.0.amount"),
    ],
)
def test_create_rejects_bad_values(api, carrier, extra, field):
    errors = field_errors(
        assert_problem(api.post("/v1/policies", payload(carrier, **extra), format="json"), 400)
    )
    assert field in errors
    assert not Policy.objects.exists()


def test_create_for_a_client_of_another_agency_is_400(api, rival):
    errors = field_errors(
        assert_problem(api.post("/v1/policies", payload(rival), format="json"), 400)
    )
    assert "clientId" in errors


def test_policy_number_is_unique_per_insurer_among_live_policies(api, carrier):
    first = PolicyFactory(client=carrier, policy_number="P-1")
    duplicate = payload(carrier, policyNumber="P-1", insurerName=first.insurer.name)
    assert_problem(api.post("/v1/policies", duplicate, format="json"), 409)
    api.put(f"/v1/policies/{first.id}", {"deleted": True}, format="json")
    assert api.post("/v1/policies", duplicate, format="json").status_code == 201


def test_status_is_derived_and_filterable(api, carrier):
    active = PolicyFactory(client=carrier)
    future = PolicyFactory(client=carrier, effective_date=today() + dt.timedelta(days=10))
    expired = PolicyFactory(
        client=carrier,
        effective_date=today() - dt.timedelta(days=400),
        expiration_date=today() - dt.timedelta(days=35),
    )
    cancelled = PolicyFactory(client=carrier, cancellation_date=today())
    expected = {"active": active, "FUTURE": future, "Expired": expired, "cancelled": cancelled}
    for status, policy in expected.items():
        body = api.get(f"/v1/policies?status={status}").json()
        assert [p["id"] for p in body["results"]] == [policy.id], status
        assert body["results"][0]["status"] == status.upper()
    assert_problem(api.get("/v1/policies?status=bogus"), 400)


def test_cancellation_by_partial_update(api, carrier):
    policy = PolicyFactory(client=carrier)
    body = api.put(
        f"/v1/policies/{policy.id}", {"cancellationDate": today().isoformat()}, format="json"
    ).json()
    assert body["status"] == "CANCELLED"
    too_early = (policy.effective_date - dt.timedelta(days=1)).isoformat()
    assert_problem(
        api.put(f"/v1/policies/{policy.id}", {"cancellationDate": too_early}, format="json"), 400
    )


def test_soft_delete_hides_from_list_until_asked(api, carrier):
    policy = PolicyFactory(client=carrier)
    assert api.put(f"/v1/policies/{policy.id}", {"deleted": True}, format="json").json()["deleted"]
    assert api.get("/v1/policies").json()["count"] == 0
    assert api.get("/v1/policies?deleted=true").json()["count"] == 1


def test_filters_q_policy_client_and_coverage_type(api, carrier, agency):
    other_client = ClientFactory(agency=agency, client_name="Blue Sky Haulers")
    al = PolicyFactory(client=carrier, policy_number="GWC-AL-77")
    gl = PolicyFactory(client=other_client, policy_number="GWC-GL-88")
    from apps.masterdata.models import CoverageType

    gl.coverage_type = CoverageType.objects.get(code="GL")
    gl.save()
    ids = lambda q: [p["id"] for p in api.get(f"/v1/policies?{q}").json()["results"]]  # noqa: E731
    assert ids("policy=gwc-al-77") == [al.id]
    assert ids("q=blue sky") == [gl.id]
    assert ids(f"clientId={carrier.id}") == [al.id]
    assert ids("coverageType=GL") == [gl.id]
    assert ids("coverageType=general liability") == [gl.id]
    assert_problem(api.get("/v1/policies?coverageType=nope"), 400)


@pytest.mark.parametrize("q", ["2345678", "02345678", " 0002345 "])
def test_q_finds_a_clients_policies_by_its_dot_however_written(api, agency, q):
    fleet = ClientFactory(agency=agency, client_name="Lone Pine", dot=q.strip().lstrip("0"))
    policy = PolicyFactory(client=fleet, policy_number="GWC-1")
    PolicyFactory(client=ClientFactory(agency=agency, client_name="Elsewhere", dot="345678"))
    response = api.get("/v1/policies", {"q": q})
    assert [p["id"] for p in response.json()["results"]] == [policy.id]


@pytest.mark.parametrize("amount", ["1e6", "1_000", "\uff11\uff10\uff10", "NaN", "Infinity"])
def test_an_amount_must_be_plain_decimal_text(api, carrier, amount):
    policy = PolicyFactory(client=carrier, premium=Decimal("10.00"))
    for body in ({"premium": amount}, {"limits": [{"name": "Aggregate", "amount": amount}]}):
        refused = assert_problem(api.put(f"/v1/policies/{policy.id}", body, format="json"), 400)
        assert {e["field"] for e in refused["errors"]} <= {"premium", "limits.0.amount"}, refused
    assert api.get(f"/v1/policies/{policy.id}").json()["premium"] == "10.00"


def test_a_negative_zero_amount_is_zero(api, carrier):
    policy = PolicyFactory(client=carrier)
    body = {"premium": "-0", "limits": [{"name": "Aggregate", "amount": "-0.00"}]}
    answer = api.put(f"/v1/policies/{policy.id}", body, format="json").json()
    assert (answer["premium"], answer["limits"][0]["amount"]) == ("0.00", "0.00")


def test_put_updates_only_present_fields_and_replaces_limits(api, carrier):
    policy = PolicyFactory(client=carrier, policy_number="KEEP-1")
    body = api.put(
        f"/v1/policies/{policy.id}",
        {"limits": [{"name": "Combined Single Limit", "amount": "1000000"}]},
        format="json",
    ).json()
    assert body["policyNumber"] == "KEEP-1"
    assert body["limits"] == [{"name": "Combined Single Limit", "amount": "1000000.00"}]


def test_other_agency_policy_is_404_and_invisible(api, rival):
    policy = PolicyFactory(client=rival)
    assert_problem(api.get(f"/v1/policies/{policy.id}"), 404)
    assert_problem(api.put(f"/v1/policies/{policy.id}", {"premium": "1"}, format="json"), 404)
    assert_problem(api.get(f"/v1/policies/{policy.id}/vehicles"), 404)
    assert api.get("/v1/policies").json()["count"] == 0
    assert api.get(f"/v1/policies?clientId={rival.id}").json()["count"] == 0


def test_permissions(viewer_api, make_api, powerless, carrier):
    policy = PolicyFactory(client=carrier)
    assert viewer_api.get(f"/v1/policies/{policy.id}").status_code == 200
    assert_problem(viewer_api.post("/v1/policies", payload(carrier), format="json"), 403)
    assert_problem(viewer_api.put(f"/v1/policies/{policy.id}", {}, format="json"), 403)
    assert_problem(make_api(powerless).get("/v1/policies"), 403)
    assert_problem(make_api(powerless).post("/v1/policies/search", {}, format="json"), 403)


def test_legacy_search_agrees_with_the_get_list(api, carrier, agency):
    for n in range(7):
        PolicyFactory(client=carrier, policy_number=f"S-{n}")
    PolicyFactory(client=ClientFactory(agency=agency))
    listed = api.get(f"/v1/policies?clientId={carrier.id}&sort=-policy&limit=3&page=2").json()
    searched = api.post(
        "/v1/policies/search",
        {
            "pageIndex": 2,
            "pageSize": 3,
            "sortBy": "policy",
            "sortOrder": "desc",
            "filter": {"clientId": carrier.id},
        },
        format="json",
    ).json()
    assert searched["items"] == listed["results"]
    assert searched["totalCount"] == listed["count"] == 7
    assert (searched["pageIndex"], searched["pageSize"]) == (2, 3)


@pytest.mark.parametrize(
    "body",
    [
        {"pageSize": 500},
        {"pageIndex": 0},
        {"sortBy": "nope"},
        {"filter": {"status": "x"}},
        {"sortOrder": "sideways"},
    ],
)
def test_legacy_search_rejects_bad_bodies(api, body):
    assert_problem(api.post("/v1/policies/search", body, format="json"), 400)


@pytest.mark.parametrize("name", ["status", "coverageType", "clientId"])
def test_legacy_search_names_a_bad_filter_as_the_body_does(api, name):
    body = {"filter": {name: "not-one"}}
    refused = assert_problem(api.post("/v1/policies/search", body, format="json"), 400)
    assert [e["field"] for e in refused["errors"]] == [f"filter.{name}"]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("q", {"x": 1}, "Expected a string."),
        ("q", 123, "Expected a string."),
        ("policy", 12345, "Expected a string."),
        ("deleted", {"x": 1}, "Must be true or false."),
        ("deleted", 1, "Must be true or false."),
        ("coverageType", ["AL", {"code": "AL"}], "Expected a string."),
        ("clientId", [1.5, {"id": 1}], "Expected a number."),
    ],
)
def test_legacy_search_refuses_a_filter_value_of_another_json_type(
    api, carrier, name, value, message
):
    body = {"filter": {name: value}}
    refused = assert_problem(api.post("/v1/policies/search", body, format="json"), 400)
    assert field_errors(refused) == {f"filter.{name}": message}


def test_legacy_search_takes_a_boolean_for_deleted(api, carrier):
    live = PolicyFactory(client=carrier)
    gone = PolicyFactory(client=carrier, deleted=True)
    for value, expected in ((True, [gone.id]), ("true", [gone.id]), (False, [live.id])):
        found = api.post("/v1/policies/search", {"filter": {"deleted": value}}, format="json")
        assert found.status_code == 200, found.content
        assert [p["id"] for p in found.json()["items"]] == expected


def test_legacy_search_desc_without_sort_by_reverses_the_default_order(api, carrier):
    start = today() - dt.timedelta(days=100)
    for days in (0, 10, 10, 5):
        PolicyFactory(client=carrier, effective_date=start + dt.timedelta(days=days))
    default = [p["id"] for p in api.get("/v1/policies").json()["results"]]
    body = {"sortOrder": "desc"}
    items = api.post("/v1/policies/search", body, format="json").json()["items"]
    assert [p["id"] for p in items] == default[::-1]


def test_legacy_search_refuses_several_values_of_a_single_value_filter(api, carrier, agency):
    other = ClientFactory(agency=agency)
    PolicyFactory(client=carrier)
    PolicyFactory(client=other)
    body = {"filter": {"clientId": [other.id, carrier.id]}}
    refused = assert_problem(api.post("/v1/policies/search", body, format="json"), 400)
    assert [(e["field"], e["message"]) for e in refused["errors"]] == [
        ("filter.clientId", "Send this parameter once.")
    ]


def test_policy_vehicles_lists_scheduled_units_with_filters(api, carrier):
    policy = PolicyFactory(client=carrier)
    from apps.masterdata.models import Make

    volvo = Make.objects.get(name="Volvo")
    cheap = VehicleFactory(client=carrier, stated_value=50_000)
    dear = VehicleFactory(client=carrier, stated_value=150_000, make=volvo)
    VehicleCoverageFactory(vehicle=cheap, policy=policy)
    VehicleCoverageFactory(
        vehicle=dear, policy=policy, coverage_status=1, policy_removed_date=today()
    )
    ids = lambda q: [  # noqa: E731
        r["id"] for r in api.get(f"/v1/policies/{policy.id}/vehicles?{q}").json()["results"]
    ]
    assert sorted(ids("")) == sorted([cheap.id, dear.id])
    assert ids("make=volvo") == [dear.id]
    assert ids("minValue=100000") == [dear.id]
    assert ids("maxValue=100000") == [cheap.id]
    assert ids("status=4") == [cheap.id]
    assert_problem(api.get(f"/v1/policies/{policy.id}/vehicles?status=9"), 400)


def test_list_query_count_is_constant(api, carrier, django_assert_max_num_queries):
    for _ in range(12):
        PolicyFactory(client=carrier)
    api.get("/v1/policies?limit=1")
    with django_assert_max_num_queries(9) as small:
        api.get("/v1/policies?limit=2")
    with django_assert_max_num_queries(9) as large:
        api.get("/v1/policies?limit=200")
    assert len(small.captured_queries) == len(large.captured_queries)


def test_policy_vehicles_order_ties_and_pages_from_both_ends(
    api, carrier, django_assert_max_num_queries
):
    """Ordered by the latest period's added date, then the vehicle id, on every page (the
    last pages are read backwards); a unit appears once, with its latest period, ties on the
    added date going to the later period. The query count does not grow with the page."""
    policy = PolicyFactory(client=carrier)
    start = policy.effective_date
    units = [VehicleFactory(client=carrier, unit=f"P-{n}") for n in range(7)]
    added = {}
    for n, unit in enumerate(units):
        day = start + dt.timedelta(days=(7 - n) % 3)  # three dates, several units on each
        VehicleCoverageFactory(vehicle=unit, policy=policy, policy_added_date=day)
        added[unit.id] = day
    twice = units[0]  # removed and scheduled again on the same day: the later period answers
    VehicleCoverage.objects.filter(vehicle=twice).update(policy_removed_date=added[twice.id])
    again = VehicleCoverageFactory(
        vehicle=twice, policy=policy, policy_added_date=added[twice.id], coverage_status=1
    )
    expected = sorted(added, key=lambda pk: (added[pk], pk))
    pages = [
        api.get(f"/v1/policies/{policy.id}/vehicles?limit=2&page={page}").json()
        for page in range(1, 5)
    ]
    assert [p["count"] for p in pages] == [7] * 4
    assert [r["id"] for p in pages for r in p["results"]] == expected
    listed = {r["id"]: r for p in pages for r in p["results"]}
    assert listed[twice.id]["assignmentId"] == again.id
    assert listed[twice.id]["coverageStatus"] == 1
    desc = api.get(f"/v1/policies/{policy.id}/vehicles?sort=-policyAddedDate&limit=7").json()
    assert [r["id"] for r in desc["results"]] == sorted(
        added, key=lambda pk: (-added[pk].toordinal(), pk)
    )
    with django_assert_max_num_queries(12) as one:
        api.get(f"/v1/policies/{policy.id}/vehicles?limit=1")
    with django_assert_max_num_queries(12) as seven:
        api.get(f"/v1/policies/{policy.id}/vehicles?limit=7&page=1")
    assert len(one.captured_queries) == len(seven.captured_queries)


def test_a_date_before_the_year_1000_is_written_with_four_digits_and_sent_back(api, carrier):
    created = api.post(
        "/v1/policies",
        payload(carrier, effectiveDate="0001-01-01", expirationDate="0999-12-31"),
        format="json",
    )
    assert created.status_code == 201, created.content
    policy = created.json()
    assert (policy["effectiveDate"], policy["expirationDate"]) == ("0001-01-01", "0999-12-31")
    response = api.put(f"/v1/policies/{policy['id']}", policy, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["effectiveDate"] == "0001-01-01"


@pytest.mark.parametrize("number", ["A\nB", "A\tB", "A\rB", "A\x7fB", "A\x85B", "\x1b[31mA"])
def test_a_policy_number_with_a_control_character_is_400(api, carrier, number):
    body = assert_problem(
        api.post("/v1/policies", payload(carrier, policyNumber=number), format="json"), 400
    )
    assert "control characters" in field_errors(body)["policyNumber"]
    assert not Policy.objects.exists()
    policy = PolicyFactory(client=carrier, policy_number="A-1")
    body = assert_problem(
        api.put(f"/v1/policies/{policy.id}", {"policyNumber": number}, format="json"), 400
    )
    assert "policyNumber" in field_errors(body)
    assert Policy.objects.get().policy_number == "A-1"


@pytest.mark.parametrize(
    ("extra", "fields"),
    [
        (
            {"coverageType": "AL", "fullCoverageTypeName": "Auto Physical Damage"},
            {"coverageType", "fullCoverageTypeName"},
        ),
        ({"coverageTypeId": "GL", "coverageType": "AL"}, {"coverageTypeId", "coverageType"}),
        ({"stateId": "OK", "stateName": "Texas"}, {"stateId", "stateName"}),
    ],
)
def test_two_fields_naming_different_records_are_400_naming_both(api, carrier, extra, fields):
    from apps.masterdata.models import CoverageType, State

    if "stateId" in extra:
        extra["stateId"] = State.objects.get(code=extra["stateId"]).id
    if "coverageTypeId" in extra:
        extra["coverageTypeId"] = CoverageType.objects.get(code=extra["coverageTypeId"]).id
    body = assert_problem(api.post("/v1/policies", payload(carrier, **extra), format="json"), 400)
    assert set(field_errors(body)) == fields
    assert not Policy.objects.exists()


def test_an_insurer_by_id_and_by_another_insurers_name_is_400(api, carrier):
    from apps.masterdata.models import Insurer

    great_west = PolicyFactory.insurer.function()  # the factory's insurer, "Great West…"
    other = Insurer.objects.create(name="Northland Insurance Company", naic="24015")
    sent = payload(carrier, insurerId=other.id, insurerName="Great West Casualty Company")
    body = assert_problem(api.post("/v1/policies", sent, format="json"), 400)
    errors = field_errors(body)
    assert set(errors) == {"insurerId", "insurerName"}
    assert "insurerName" in errors["insurerId"] and "insurerId" in errors["insurerName"]
    policy = PolicyFactory(client=carrier, insurer=great_west)
    changed = api.put(
        f"/v1/policies/{policy.id}",
        {"insurerId": great_west.id, "insurerName": "Northland Insurance Company"},
        format="json",
    )
    assert set(field_errors(assert_problem(changed, 400))) == {"insurerId", "insurerName"}


def test_the_same_record_named_every_way_is_accepted(api, carrier):
    from apps.masterdata.models import CoverageType

    apd = CoverageType.objects.get(code="APD")
    sent = payload(
        carrier,
        coverageTypeId=apd.id,
        coverageType="apd",
        fullCoverageTypeName=" auto physical damage ",
        insurerName="great west casualty company",
        stateName="TX",
    )
    PolicyFactory.insurer.function()
    response = api.post("/v1/policies", sent, format="json")
    assert response.status_code == 201, response.content
    policy = response.json()
    assert policy["coverageType"] == "APD" and policy["stateName"] == "Texas"
    assert api.put(f"/v1/policies/{policy['id']}", policy, format="json").status_code == 200


def test_a_null_beside_a_name_names_nothing_whatever_the_order(api, carrier):
    sent = payload(carrier, coverageType="GL", fullCoverageTypeName=None, stateId=None)
    response = api.post("/v1/policies", {**sent, "stateName": "TX"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["coverageType"] == "GL" and response.json()["stateName"] == "Texas"


def test_a_policy_stored_before_a_rule_is_still_cancelled_and_deleted(api, carrier):
    # model_update ran full_clean() on the whole record: a number stored with a tab before
    # numbers were checked made a cancellation a 400 on policyNumber, a field never sent.
    policy = PolicyFactory(client=carrier)
    Policy.objects.filter(pk=policy.pk).update(policy_number="GWC\t123")
    day = policy.effective_date + dt.timedelta(days=10)
    cancelled = api.put(
        f"/v1/policies/{policy.id}", {"cancellationDate": day.isoformat()}, format="json"
    )
    assert cancelled.status_code == 200, cancelled.content
    assert api.put(f"/v1/policies/{policy.id}", {"deleted": True}, format="json").status_code == 200
    # Sending such a value is refused still.
    refused = api.put(f"/v1/policies/{policy.id}", {"policyNumber": "X\t1"}, format="json")
    assert "policyNumber" in field_errors(assert_problem(refused, 400))
