"""Verification's response serializers render what they declare (issue 14): the schema
drf-spectacular publishes and the bytes the endpoints answer come from the same classes, so
they cannot drift. Each answer is read back over HTTP and walked against the declared fields of
its serializer, at every depth: the keys rendered are the fields declared, in their order; an
absent field is one declared not required (and every field is rendered by some answer)."""

from __future__ import annotations

from collections import defaultdict
from unittest import mock

import pytest
from djangorestframework_camel_case.render import CamelCaseJSONRenderer as LibraryRenderer
from djangorestframework_camel_case.util import camelize, underscoreize
from rest_framework import serializers

from apps.compliance.serializers import ComplianceSerializer, ReasonSerializer
from apps.core import renderers
from apps.coverages.api import serializers as s
from apps.coverages.serializers import LimitSerializer
from apps.masterdata.models import State
from tests.coverages.conftest import VIN
from tests.factories import ClientFactory, VehicleFactory

pytestmark = pytest.mark.django_db
UNCOVERED_VIN = "3AKJHHDR5LSLA1234"
PROFILE = "federal-minimum"


@pytest.fixture
def world(agency, carrier, covered):
    """The insured carrier of `covered`, and an uninsured client with an uncovered unit and an
    uncovered unit with `covered`'s plate in another state."""
    uninsured = ClientFactory(agency=agency, client_name="Bare Haulers", dot="2345678")
    VehicleFactory(client=uninsured, serial_number=UNCOVERED_VIN, license_plate="")
    oklahoma = State.objects.get(code="OK")
    VehicleFactory(client=uninsured, license_plate="TX-4821A", license_plate_state=oklahoma)


def _walk(serializer: serializers.Serializer, data: dict, path: str, seen: dict) -> None:
    fields = serializer.fields
    declared = list(fields)
    assert list(data) == [name for name in declared if name in data], (path, list(data))
    missing = set(declared) - set(data)
    assert all(not fields[name].required for name in missing), (path, missing)
    seen[type(serializer)].update(data)
    for name, value in data.items():
        field = fields[name]
        if value is None:
            assert field.allow_null, f"{path}.{name}"
        elif isinstance(field, serializers.ListSerializer):
            for index, item in enumerate(value):
                _walk(field.child, item, f"{path}.{name}[{index}]", seen)
        elif isinstance(field, serializers.Serializer):
            _walk(field, value, f"{path}.{name}", seen)


def _check(response, serializer_class, seen) -> None:
    assert response.status_code == 200, response.content
    body = response.json()
    # Every key is spelled as the camel-case library spells its field (verification's shapes
    # write the final keys themselves, and the renderer sends them as they are).
    assert camelize(underscoreize(body)) == body
    # Not walked by the renderer, so no float is marked for DRF's encoder (none is declared):
    # orjson's bytes are json.dumps' (the library's renderer, as before issue 18's orjson).
    assert response.content == LibraryRenderer().render(response.data)
    _walk(serializer_class(), underscoreize(body), serializer_class.__name__, seen)


def test_verification_answers_render_exactly_their_declared_fields(api, carrier, world):
    seen: dict[type, set] = defaultdict(set)
    for query in ("dot=1234567", "dots=1234567&dots=2345678&dots=9999999", "id={}"):
        for extra in ("", "&profile=federal-minimum&asOf=2020-01-01", "&profile=federal-minimum"):
            url = "/v1/coverages/clients?" + query.format(carrier.id) + extra
            _check(api.get(url), s.ClientVerificationResponseSerializer, seen)
    for query in (f"vin={VIN}", "licensePlate=tx 4821a", f"vin={UNCOVERED_VIN}"):
        for extra in ("", "&profile=federal-minimum"):
            url = f"/v1/coverages/vehicles?{query}{extra}"
            _check(api.get(url), s.VehicleVerificationResponseSerializer, seen)
    for profile in ({}, {"profile": "federal-minimum"}):
        body = {
            "vins": [VIN, UNCOVERED_VIN, "1HGCM82633A004352"],
            "licensePlates": [
                "TX4821A",
                "NOPLATE1",
                {"licensePlate": "TX4821A", "licensePlateState": "TX"},
            ],
            **profile,
        }
        response = api.post("/v1/coverages/vehicles/batch", body, format="json")
        _check(response, s.FleetResponseSerializer, seen)

    shaped = {
        s.ClientVerificationResponseSerializer,
        s.ClientVerificationSerializer,
        s.ClientRefSerializer,
        s.CoverageRefSerializer,
        s.VehicleVerificationResponseSerializer,
        s.VehicleVerificationSerializer,
        s.VehicleRefSerializer,
        s.VehicleCoverageRefSerializer,
        s.FleetResponseSerializer,
        s.FleetEntrySerializer,
        s.FleetSummarySerializer,
        LimitSerializer,
        ComplianceSerializer,
        ReasonSerializer,
    }
    for serializer_class in shaped:
        assert seen[serializer_class] == set(serializer_class().fields), serializer_class


def test_verification_answers_are_sent_without_the_renderers_walk(api, carrier, world):
    # Built with their final keys (a CamelCased): the renderer looks at the answer once, not at
    # each of its dicts and lists, however many units a batch has (issue 18).
    requests = [
        lambda: api.get("/v1/coverages/clients?dots=1234567&dots=2345678&profile=federal-minimum"),
        lambda: api.get(f"/v1/coverages/vehicles?vin={VIN}&profile=federal-minimum"),
        lambda: api.post(
            "/v1/coverages/vehicles/batch",
            {"vins": [VIN, UNCOVERED_VIN] * 20, "licensePlates": ["TX4821A"], "profile": PROFILE},
            format="json",
        ),
    ]
    for send in requests:
        with mock.patch.object(renderers, "camelize", wraps=renderers.camelize) as walk:
            response = send()
        assert response.status_code == 200, response.content
        assert response.json()["results"]
        assert walk.call_count == 1, walk.call_count


def test_an_answer_shapes_each_distinct_limit_once_and_prints_each_as_itself():
    from decimal import Decimal

    from apps.coverages.rows import LimitRow

    parts = s.AnswerParts(on=None)
    million = parts.limit(LimitRow("Combined single limit", Decimal("1000000.00")))
    assert parts.limit(LimitRow("Combined single limit", Decimal("1000000"))) is million
    assert million == {"name": "Combined single limit", "amount": "1000000.00"}
    other = parts.limit(LimitRow("Each occurrence", Decimal("1000000.00")))
    assert other is not million and other["name"] == "Each occurrence"
    # Equal amounts print alike, but for the sign of zero.
    assert parts.limit(LimitRow("Deductible", Decimal("-0.00")))["amount"] == "-0.00"
    assert parts.limit(LimitRow("Deductible", Decimal("0.00")))["amount"] == "0.00"


def test_policies_alike_in_their_terms_share_them_and_no_other_policy_does():
    # AnswerParts.terms shapes a policy's coverage type, insurer, dates, status and limits
    # once for all the answer's policies alike in them: each shape equals the one built alone,
    # and a policy differing in any one of them gets terms of its own.
    import datetime as dt
    from decimal import Decimal

    from apps.coverages.rows import CoverageTypeRow, InsurerRow, LimitRow, PolicyRow

    al = CoverageTypeRow(1, "AL", "Auto Liability", True)
    gl = CoverageTypeRow(2, "GL", "General Liability", False)
    mutual, other = InsurerRow(7, "Mutual", "12345", "A"), InsurerRow(8, "Other", None, "")
    million = [LimitRow("CSL", Decimal("1000000.00"))]

    def policy(pk: int, **changes) -> PolicyRow:
        fields = {
            "id": pk,
            "client_id": pk,
            "policy_number": f"P-{pk}",
            "coverage_type_id": 1,
            "coverage_type": al,
            "insurer_id": 7,
            "insurer": mutual,
            "effective_date": dt.date(2026, 1, 1),
            "expiration_date": dt.date(2027, 1, 1),
            "cancellation_date": None,
            "additional_insured": False,
            "subrogation_waived": False,
            "deleted": False,
            "limits": list(million),
            **changes,
        }
        return PolicyRow(**fields)

    on = dt.date(2026, 6, 1)
    base, twin = policy(1), policy(2)
    variants = [
        policy(3, coverage_type_id=2, coverage_type=gl),
        policy(4, insurer_id=8, insurer=other),
        policy(5, insurer_id=None, insurer=None),
        policy(6, effective_date=dt.date(2026, 2, 1)),
        policy(7, expiration_date=dt.date(2026, 5, 1)),  # expired on the answer's date
        policy(8, cancellation_date=dt.date(2026, 3, 1)),  # cancelled
        policy(9, cancellation_date=dt.date(2026, 9, 1)),  # active until September
        policy(10, limits=[LimitRow("CSL", Decimal("2000000.00"))]),
        policy(11, limits=[*million, LimitRow("Medical", Decimal("5000.00"))]),
        policy(12, limits=[]),
    ]
    parts = s.AnswerParts(on)
    shaped = [s.CoverageRefSerializer.shape(p, parts) for p in (base, twin, *variants)]
    for p, shape in zip((base, twin, *variants), shaped, strict=True):
        assert shape == s.CoverageRefSerializer.shape(p, s.AnswerParts(on))
        assert (shape["policyId"], shape["policyNumber"]) == (p.id, p.policy_number)
    assert parts.terms(base) is parts.terms(twin)
    assert len({id(parts.terms(p)) for p in (base, *variants)}) == 1 + len(variants)
    assert [x["status"] for x in shaped[6:9]] == ["EXPIRED", "CANCELLED", "ACTIVE"]
