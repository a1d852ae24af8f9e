from __future__ import annotations

import datetime as dt
from collections import defaultdict

from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied, ValidationError

from apps.clients.models import Client
from apps.compliance.evaluation import RESULTS
from apps.compliance.selectors import ProfileChoice, requirement_profile_resolve
from apps.compliance.serializers import ComplianceSerializer, ProfileRefField, compliance_field
from apps.core.camel_case import CamelCased, camel_key
from apps.core.identifiers import parse_vin, plate_problem
from apps.core.params import (
    AsOfParam,
    DotListParam,
    DotParam,
    IdParam,
    PlateParam,
    QueryParam,
    QueryParameters,
)
from apps.core.serializers import (
    AsciiDateField,
    ShapedSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictTextListField,
    reference_id_field,
)
from apps.coverages.choices import (
    VEHICLE_VERIFICATION_STATUSES,
    VERIFICATION_STATUSES,
    CoverageStatus,
)
from apps.coverages.models import VehicleCoverage
from apps.coverages.permissions import PROFILE_PERMISSION
from apps.coverages.rows import LimitRow
from apps.coverages.selectors import (
    ClientVerification,
    FleetSummary,
    FleetVerification,
    PlateLookup,
    VehicleVerification,
    VerificationAnswer,
)
from apps.coverages.serializers import CoverageStatusNameField, LimitSerializer
from apps.masterdata.lookup import resolve_many, unknown
from apps.masterdata.models import State
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle
from apps.vehicles.params import PLATE_STATE, PlateStateParam, VinParam, plate_state_only_with_plate

MAX_DOTS = 500
MAX_BATCH = 1000
SCHEDULED = CoverageStatus.SCHEDULED_UNIT


class AssignmentCreateSerializer(serializers.Serializer):
    policy_id = reference_id_field()
    policy_added_date = AsciiDateField(required=False, allow_null=True)


class VehicleAssignmentCreateSerializer(AssignmentCreateSerializer):
    vehicle_id = reference_id_field()


class DriverAssignmentCreateSerializer(AssignmentCreateSerializer):
    driver_id = reference_id_field()


class AssignmentUpdateSerializer(serializers.Serializer):
    policy_id = reference_id_field()
    coverage_status = StrictIntegerField()
    policy_added_date = AsciiDateField(required=False, allow_null=True)
    policy_removed_date = AsciiDateField(required=False, allow_null=True)


class VehicleAssignmentUpdateSerializer(AssignmentUpdateSerializer):
    vehicle_id = reference_id_field()


class DriverAssignmentUpdateSerializer(AssignmentUpdateSerializer):
    driver_id = reference_id_field()


class AssignmentSerializer(serializers.Serializer):
    """An assignment period as the coverage endpoints answer it."""

    id = StrictIntegerField()
    policy_id = StrictIntegerField()
    coverage_status = StrictIntegerField()
    coverage_status_name = CoverageStatusNameField()
    policy_added_date = AsciiDateField()
    policy_removed_date = AsciiDateField(allow_null=True)


class VehicleAssignmentSerializer(AssignmentSerializer):
    vehicle_id = StrictIntegerField()


class DriverAssignmentSerializer(AssignmentSerializer):
    driver_id = StrictIntegerField()


# --- verification: query parameters -------------------------------------------------------


def profile_choice(request, raw) -> ProfileChoice | None:
    """The profile a verification names; unknown or another agency's: 400 on `profile`."""
    if raw is None or raw == "":
        return None
    if not request.user.has_perm(PROFILE_PERMISSION):
        raise PermissionDenied("Checking against a profile needs permission to view profiles.")
    choice = None
    if len(str(raw)) <= 50:
        choice = requirement_profile_resolve(user=request.user, ref=str(raw))
    if choice is None:
        raise ValidationError({"profile": [f"No requirement profile '{raw}'."]})
    return choice


class ProfileParam(QueryParam):
    """A requirement profile's id or code, resolved for the caller."""

    def to_internal_value(self, data) -> str:
        return data

    def resolve(self, value, request) -> ProfileChoice | None:
        return profile_choice(request, value)


AS_OF = "The date to verify (default: today in the service's time zone)."
PROFILE = (
    "A requirement profile's id or code (e.g. federal-minimum): each result gains `compliance`."
)


class ClientVerificationParams(QueryParameters):
    one_of = ("dots", "dot", "id")
    as_of = AsOfParam(help_text=AS_OF)
    profile = ProfileParam(help_text=PROFILE)
    dots = DotListParam(
        most=MAX_DOTS, help_text=f"DOT numbers (repeat the parameter, at most {MAX_DOTS})."
    )
    dot = DotParam(help_text="One DOT number.")
    id = IdParam(help_text="A client id.")


class VehicleVerificationParams(QueryParameters):
    one_of = ("vin", "license_plate")
    as_of = AsOfParam(help_text=AS_OF)
    profile = ProfileParam(help_text=PROFILE)
    vin = VinParam(help_text="A 17-character VIN.")
    license_plate_state = PlateStateParam(help_text=PLATE_STATE)
    license_plate = PlateParam(help_text="A license plate (case, spaces and dashes ignored).")

    def read(self, data, request):
        return super().read(plate_state_only_with_plate(data), request)


# --- verification: the answers, shaped from the selectors' records ------------------------
# Each class declares the schema and renders it (`shape`, apps.core.serializers.ShapedSerializer).
# The shapes write the keys the API sends (the declared fields in camelCase, as the renderer
# would turn them), and the whole answer is a CamelCased the renderer sends as it is: a batch
# no longer builds 40,000 snake_case keys to have each one rebuilt (issue 18).


class IsoDates(dict):
    """Each date's ISO 8601 text, written once per answer and read back by a dict lookup:
    `date.isoformat()` costs four times that lookup, and a 200-DOT answer writes 600 dates,
    most of them the same few renewal days (issue 18)."""

    __slots__ = ()

    def __missing__(self, day: dt.date) -> str:
        text = self[day] = day.isoformat()
        return text


class ClientRefSerializer(ShapedSerializer):
    id = StrictIntegerField()
    client_name = StrictCharField()
    dot = StrictCharField(allow_null=True)
    agency_id = StrictIntegerField()
    agency_name = StrictCharField()

    @staticmethod
    def shape(client: Client) -> dict:
        return {
            "id": client.id,
            "clientName": client.client_name,
            "dot": client.dot,
            "agencyId": client.agency_id,
            "agencyName": client.agency.name,
        }


class CoverageRefSerializer(ShapedSerializer):
    policy_id = StrictIntegerField()
    policy_number = StrictCharField(allow_null=True)
    coverage_type = StrictCharField()
    coverage_type_name = StrictCharField()
    insurer_name = StrictCharField(allow_null=True)
    naic = StrictCharField(allow_null=True)
    am_best_rating = StrictCharField(allow_null=True)
    effective_date = AsciiDateField()
    expiration_date = AsciiDateField()
    status = StrictCharField()
    limits = LimitSerializer(many=True)

    @staticmethod
    def shape(policy: Policy, parts: AnswerParts) -> dict:
        """Built once per policy (AnswerParts.policy; a client's answer, whose policies are its
        own, calls it directly): its id and number, then its terms, shared by the answer's
        policies alike in them (AnswerParts.terms)."""
        return {
            "policyId": policy.id,
            "policyNumber": policy.policy_number,
            **parts.terms(policy),
        }

    @staticmethod
    def terms(policy: Policy, parts: AnswerParts, limits: list[dict]) -> dict:
        """The rest of a policy's shape: its coverage type, insurer, dates, status on the
        answer's date and limits (already shaped)."""
        insurer, iso = (policy.insurer if policy.insurer_id else None), parts.dates
        return {
            "coverageType": policy.coverage_type.code,
            "coverageTypeName": policy.coverage_type.name,
            "insurerName": insurer.name if insurer else None,
            "naic": insurer.naic if insurer else None,
            "amBestRating": (insurer.am_best_rating or None) if insurer else None,
            "effectiveDate": iso[policy.effective_date],
            "expirationDate": iso[policy.expiration_date],
            "status": policy.status_on(parts.on),
            "limits": limits,
        }


class VehicleCoverageRefSerializer(CoverageRefSerializer):
    coverage_status = StrictIntegerField()
    coverage_status_name = StrictCharField()
    policy_added_date = AsciiDateField()

    @staticmethod
    def shape(period: VehicleCoverage, parts: AnswerParts) -> dict:
        """Built once per policy and date added (AnswerParts.period). A period is answered
        because it covers D, so on D it was scheduled (4): a removal or a decline recorded
        since takes effect after D (contract section 8: statuses change with an effective
        date, and the history answers for any D)."""
        return {
            **parts.policy(period.policy),
            "coverageStatus": SCHEDULED,
            "coverageStatusName": SCHEDULED.label,
            "policyAddedDate": parts.dates[period.policy_added_date],
        }


class VehicleRefSerializer(ShapedSerializer):
    id = StrictIntegerField()
    vin = StrictCharField()
    unit = StrictCharField()
    model_year = StrictIntegerField()
    make = StrictCharField()
    license_plate = StrictCharField()
    license_plate_state = StrictCharField(allow_null=True)

    @staticmethod
    def shape(vehicle: Vehicle) -> dict:
        return {
            "id": vehicle.id,
            "vin": vehicle.serial_number,
            "unit": vehicle.unit,
            "modelYear": vehicle.model_year,
            "make": vehicle.make.name,
            "licensePlate": vehicle.license_plate,
            "licensePlateState": vehicle.license_plate_state.code
            if vehicle.license_plate_state_id
            else None,
        }


class AnswerParts:
    """What one answer has shaped of its policies, periods and clients, shared (read-only) by
    its results: a batch's thousand units are mostly one client's, on a handful of policies,
    most of them scheduled alike on the same day (one period shape for them all); 200 DOTs'
    policies carry a few distinct limits ($1,000,000 of auto liability), each shaped once."""

    __slots__ = ("_clients", "_limits", "_periods", "_policies", "_terms", "dates", "on")

    def __init__(self, on: dt.date):
        self.on = on
        self._policies: dict[int, dict] = {}
        self._periods: dict[tuple, dict] = {}
        self._clients: dict[int, dict] = {}
        self._limits: dict[tuple, dict] = {}
        self._terms: dict[tuple, dict] = {}
        self.dates = IsoDates()

    def limit(self, row: LimitRow) -> dict:
        # Equal amounts print alike ("1000000.00"), but for a negative zero: its sign is keyed.
        key = (row.name, row.amount, row.amount.is_signed())
        part = self._limits.get(key)
        if part is None:
            part = self._limits[key] = LimitSerializer.shape(row)
        return part

    def terms(self, policy: Policy) -> dict:
        """A policy's terms (`CoverageRefSerializer.terms`), shaped once per coverage type,
        insurer, dates and limits: 200 DOTs' 300 policies are mostly a few such terms (the
        same line, insurer, renewal day and $1,000,000 limit), and building the nine keys
        per policy was half of their shaping (-30% of a 200-DOT answer's shapes). Within one
        answer an id names one coverage type and one insurer (one read). Limits are keyed as
        they are: equal `LimitRow`s (name and amount) print alike, `f"{amount:.2f}"`, but for
        a zero's sign, which neither database keeps (PostgreSQL's numeric has no negative
        zero, SQLite's NUMERIC column stores 0); a model's limits are keyed by their ids."""
        rows = policy.limit_rows()
        key = (
            policy.coverage_type_id,
            policy.insurer_id,
            policy.effective_date,
            policy.expiration_date,
            policy.cancellation_date,
            *rows,
        )
        part = self._terms.get(key)
        if part is None:
            limits = list(map(self.limit, rows))
            part = self._terms[key] = CoverageRefSerializer.terms(policy, self, limits)
        return part

    def period(self, period: VehicleCoverage) -> dict:
        key = (period.policy_id, period.policy_added_date)
        part = self._periods.get(key)
        if part is None:
            part = self._periods[key] = VehicleCoverageRefSerializer.shape(period, self)
        return part

    def policy(self, policy: Policy) -> dict:
        part = self._policies.get(policy.id)
        if part is None:
            part = self._policies[policy.id] = CoverageRefSerializer.shape(policy, self)
        return part

    def client_of(self, vehicle: Vehicle) -> dict:
        part = self._clients.get(vehicle.client_id)
        if part is None:
            part = self._clients[vehicle.client_id] = ClientRefSerializer.shape(vehicle.client)
        return part


def with_compliance(shaped: dict, result: ClientVerification | VehicleVerification) -> dict:
    """A verification result's shape, with `compliance` when a profile was asked for."""
    if result.checked:
        shaped["compliance"] = ComplianceSerializer.shape(result.compliance)
    return shaped


# `{"asOf", "results"}`: a subclass declares `results`, whose item serializer renders each
# (a comment, not a docstring: drf-spectacular would publish a docstring in the schema).
class VerificationAnswerSerializer(ShapedSerializer):
    as_of = AsciiDateField()

    @classmethod
    def shape(cls, answer: VerificationAnswer) -> CamelCased:
        item, parts = cls._declared_fields["results"].child, AnswerParts(answer.on)
        return CamelCased(
            asOf=answer.on.isoformat(),
            results=[item.shape(r, parts) for r in answer.results],
        )


class ClientVerificationSerializer(ShapedSerializer):
    dot = StrictCharField(allow_null=True)
    found = StrictBooleanField()
    verified = StrictBooleanField()
    status = serializers.ChoiceField(choices=VERIFICATION_STATUSES)
    client = ClientRefSerializer(allow_null=True)
    coverages = CoverageRefSerializer(many=True)
    compliance = compliance_field()

    @staticmethod
    def shape(result: ClientVerification, parts: AnswerParts, policy=CoverageRefSerializer.shape):
        # A client answers one DOT of the answer at most, so each of its policies is shaped
        # here, once, without a look in the answer's parts (they share the limits' shapes).
        client = result.client
        shaped = {
            "dot": result.dot,
            "found": client is not None,
            "verified": result.verified,
            "status": result.status,
            "client": None if client is None else ClientRefSerializer.shape(client),
            "coverages": [policy(p, parts) for p in result.policies],
        }
        return with_compliance(shaped, result)


class ClientVerificationResponseSerializer(VerificationAnswerSerializer):
    results = ClientVerificationSerializer(many=True)


# A unit's answer, alone (vehicle verification) or as a batch entry: one shape, whose parts
# each subclass's `lay_out` orders as it declares them (`compliance`, last, only with a
# profile). A dict literal per subclass, not a loop over the declared fields: that loop cost a
# 1,000-unit batch a microsecond and a half per entry.
class VehicleAnswerSerializer(ShapedSerializer):
    @classmethod
    def shape(cls, result: VehicleVerification, parts: AnswerParts) -> dict:
        vehicle = result.vehicle
        found = vehicle is not None
        shaped = cls.lay_out(
            result,
            found=found,
            vehicle=VehicleRefSerializer.shape(vehicle) if found else None,
            client=parts.client_of(vehicle) if found else None,
            coverages=[parts.period(p) for p in result.periods],
        )
        return with_compliance(shaped, result)


class VehicleVerificationSerializer(VehicleAnswerSerializer):
    vehicle = VehicleRefSerializer()
    client = ClientRefSerializer()
    verified = StrictBooleanField()
    status = serializers.ChoiceField(choices=VEHICLE_VERIFICATION_STATUSES)
    coverages = VehicleCoverageRefSerializer(many=True)
    compliance = compliance_field()

    @staticmethod
    def lay_out(result, *, found, vehicle, client, coverages) -> dict:
        return {
            "vehicle": vehicle,
            "client": client,
            "verified": result.verified,
            "status": result.status,
            "coverages": coverages,
        }


class VehicleVerificationResponseSerializer(VerificationAnswerSerializer):
    results = VehicleVerificationSerializer(many=True)


class BodyAsOfField(AsciiDateField):
    # `asOf` in a body, read as the query parameter is (AsOfParam): empty means today (as null
    # and absent do), spaces around a date are ignored, and spaces alone are no date (400).
    def to_internal_value(self, value):
        if value == "":
            return None
        if isinstance(value, str):
            value = value.strip()
        return super().to_internal_value(value)


PLATE_MAX_LENGTH = 15
_PLATE_ENTRY_KEYS = ("license_plate", "license_plate_state")


@extend_schema_field(
    {
        "oneOf": [
            {
                "type": "string",
                "minLength": 1,
                "maxLength": PLATE_MAX_LENGTH,
                "description": "A license plate, of any state.",
            },
            {
                "type": "object",
                "properties": {
                    "licensePlate": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": PLATE_MAX_LENGTH,
                    },
                    "licensePlateState": {
                        "type": "string",
                        "nullable": True,
                        "description": "The plate's state, by name or USPS code, as "
                        "`GET /v1/coverages/vehicles` takes `licensePlateState`: only its "
                        "units answer (null or empty: any state).",
                    },
                },
                "required": ["licensePlate"],
                "additionalProperties": False,
            },
        ]
    }
)
class PlateEntryField(serializers.Field):
    """One element of the batch's `licensePlates` that is not a clean string (the list's
    strings are read by `FleetRequestSerializer.validate_license_plates`): a plate, read as a
    `StrictCharField`, or `{"licensePlate", "licensePlateState"}`, an object read here as a
    `PlateLookup` whose state is resolved, with the list's others, in one query."""

    default_error_messages = {
        "invalid": "Expected a plate, or an object with licensePlate and licensePlateState.",
        "unknown_key": "Not a key of a plate: send licensePlate and, optionally, "
        "licensePlateState.",
        "state": "Expected the state's name or USPS code, as a string.",
    }

    def __init__(self, **kwargs):
        self.text = StrictCharField(max_length=PLATE_MAX_LENGTH)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, str):
            return self.text.run_validation(data)
        if not isinstance(data, dict):
            self.fail("invalid")
        errors = {
            key: [self.error_messages["unknown_key"]]
            for key in data
            if key not in _PLATE_ENTRY_KEYS
        }
        plate = None
        if "license_plate" not in data:
            errors["license_plate"] = [self.error_messages["required"]]
        else:
            try:
                plate = self.text.run_validation(data["license_plate"])
                if problem := plate_problem(plate):
                    raise ValidationError([problem])
            except ValidationError as exc:
                errors["license_plate"] = exc.detail
        state = data.get("license_plate_state")
        if state is not None and not isinstance(state, str):
            errors["license_plate_state"] = [self.error_messages["state"]]
        if errors:
            raise ValidationError(errors)
        return PlateLookup(plate, None, state or None)  # the state resolved by the list


class FleetRequestSerializer(serializers.Serializer):
    vins = StrictTextListField(max_length=64, required=False, default=list)
    license_plates = StrictTextListField(
        max_length=PLATE_MAX_LENGTH,
        child=PlateEntryField(),
        required=False,
        default=list,
        help_text="Plates (case, spaces and dashes ignored), each a string (any state) or "
        "`{licensePlate, licensePlateState}` (that state's units only).",
    )
    as_of = BodyAsOfField(required=False, allow_null=True)
    profile = ProfileRefField(
        required=False, help_text="A requirement profile's id or code: adds `compliance`."
    )

    def validate_vins(self, values):
        cleaned, errors = [], {}
        for index, value in enumerate(values):
            try:
                cleaned.append(parse_vin(value, field=index))
            except serializers.ValidationError as exc:
                errors.update(exc.detail)
        if errors:
            raise serializers.ValidationError(errors)
        return cleaned

    def validate_license_plates(self, values) -> list[PlateLookup]:
        """Each element as a `PlateLookup`: a plate (any state), or an object's plate with its
        state, named as `GET /v1/coverages/vehicles` takes `licensePlateState` (an unknown one:
        400 on the element's `licensePlateState`). The states are resolved in one query."""
        lookups, refused, states = [], {}, defaultdict(list)
        for index, value in enumerate(values):
            if isinstance(value, PlateLookup):  # an object, read by `PlateEntryField`
                if value.state_sent is not None:
                    states[value.state_sent].append(index)
                lookups.append(value)
                continue
            plate = value.strip()
            problem = plate_problem(plate) if plate else "A plate cannot be blank."
            if problem:
                refused[index] = [problem]
            lookups.append(PlateLookup(plate))
        found = resolve_many(State, states) if states else {}
        for sent, indexes in states.items():
            if sent not in found:
                for index in indexes:
                    refused[index] = {"license_plate_state": unknown(State, sent).detail}
        if refused:
            raise serializers.ValidationError(dict(sorted(refused.items())))
        if found:
            lookups = [
                lookup._replace(
                    state=found[lookup.state_sent], state_sent=lookup.state_sent.strip()
                )
                if lookup.state_sent is not None
                else lookup
                for lookup in lookups
            ]
        return lookups

    def validate(self, attrs):
        total = len(attrs["vins"]) + len(attrs["license_plates"])
        if total == 0:
            raise serializers.ValidationError({"vins": ["Send at least one VIN or plate."]})
        if total > MAX_BATCH:
            raise serializers.ValidationError(
                {"vins": [f"At most {MAX_BATCH} VINs and plates together."]}
            )
        return attrs


class FleetEntrySerializer(VehicleAnswerSerializer):
    vin = StrictCharField(required=False)
    license_plate = StrictCharField(required=False)
    license_plate_state = StrictCharField(
        required=False, help_text="The plate's state as the entry named it."
    )
    license_plate_states = serializers.ListField(
        child=StrictCharField(allow_null=True),
        required=False,
        help_text="A plate sent without a state that units of several states carry: their "
        "states (USPS codes, sorted; null: a unit without one). The entry is verified only "
        "when each of those trucks is covered; send the plate with its state to ask about one.",
    )
    found = StrictBooleanField()
    verified = StrictBooleanField()
    status = serializers.ChoiceField(choices=VERIFICATION_STATUSES)
    vehicle = VehicleRefSerializer(allow_null=True)
    client = ClientRefSerializer(allow_null=True)
    coverages = VehicleCoverageRefSerializer(many=True)
    compliance = compliance_field()

    @staticmethod
    def lay_out(result, *, found, vehicle, client, coverages) -> dict:
        asked = {camel_key(result.key_name): result.key}
        if result.key_state is not None:  # a plate with its state named
            asked["licensePlateState"] = result.key_state
        if result.plate_states is not None:  # a plate of several states
            asked["licensePlateStates"] = result.plate_states
        return {
            **asked,
            "found": found,
            "verified": result.verified,
            "status": result.status,
            "vehicle": vehicle,
            "client": client,
            "coverages": coverages,
        }


def _count_name(result: str) -> str:
    """A compliance result's count in the batch summary: "PASS" is counted as `pass`."""
    return result.lower()


class FleetSummarySerializer(ShapedSerializer):
    requested = StrictIntegerField()
    covered = StrictIntegerField()
    uncovered = StrictIntegerField()
    not_found = StrictIntegerField()
    compliance = inline_serializer(
        "FleetComplianceSummary",
        fields={_count_name(result): StrictIntegerField() for result in RESULTS},
        required=False,
        help_text="With a profile: how many found units PASS, CAUTION and FAIL.",
    )

    @staticmethod
    def shape(summary: FleetSummary) -> dict:
        shaped = {
            "requested": summary.requested,
            "covered": summary.covered,
            "uncovered": summary.uncovered,
            "notFound": summary.not_found,
        }
        if summary.compliance is not None:
            shaped["compliance"] = {_count_name(r): n for r, n in summary.compliance.items()}
        return shaped


class FleetResponseSerializer(ShapedSerializer):
    as_of = AsciiDateField()
    results = FleetEntrySerializer(many=True)
    summary = FleetSummarySerializer()

    @staticmethod
    def shape(answer: FleetVerification) -> CamelCased:
        parts = AnswerParts(answer.on)
        return CamelCased(
            asOf=answer.on.isoformat(),
            results=[FleetEntrySerializer.shape(e, parts) for e in answer.results],
            summary=FleetSummarySerializer.shape(answer.summary),
        )
