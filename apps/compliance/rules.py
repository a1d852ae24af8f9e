"""The rules a requirement profile holds (contract section 15), and their validation.

Rules are stored as a JSON list in the normalized shape this module produces, so the
evaluation never has to guess at a rule: every rule that reaches the database went through
`rules_clean`, whether it came from the API or from the admin.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError

from apps.clients.models import CargoClass
from apps.core.camel_case import KeySentTwice, snake, underscoreize
from apps.core.money import CENT, format_money, money_text, not_money_text_message
from apps.core.serializers import REPEATED_FIELD_MESSAGE
from apps.masterdata.models import AM_BEST_ORDER, CoverageType
from apps.policies.choices import LimitName

COVERAGE = "coverage"
INSURER_RATING = "insurer_rating"
ADDITIONAL_INSURED = "additional_insured"
WAIVER_OF_SUBROGATION = "waiver_of_subrogation"
EXPIRATION_NOTICE = "expiration_notice"
FEDERAL_MINIMUM = "federal_minimum"
KINDS = (
    COVERAGE,
    INSURER_RATING,
    ADDITIONAL_INSURED,
    WAIVER_OF_SUBROGATION,
    EXPIRATION_NOTICE,
    FEDERAL_MINIMUM,
)
# The properties each kind takes besides `kind` (snake_case: the API's parser has already
# turned camelCase into it; the admin's JSON may use either).
PROPERTIES = {
    COVERAGE: {"coverage_type", "minimum_limit", "limit_name"},
    INSURER_RATING: {"minimum"},
    ADDITIONAL_INSURED: set(),
    WAIVER_OF_SUBROGATION: set(),
    EXPIRATION_NOTICE: {"days"},
    FEDERAL_MINIMUM: set(),
}
MAX_RULES = 50
MAX_AMOUNT = Decimal("999999999999.99")
MAX_NOTICE_DAYS = 365

# 49 CFR 387.9, schedule of limits for for-hire carriers in interstate commerce.
FEDERAL_MINIMUMS = {
    CargoClass.GENERAL_FREIGHT: Decimal("750000.00"),
    CargoClass.OIL: Decimal("1000000.00"),
    CargoClass.HAZMAT: Decimal("1000000.00"),
    CargoClass.HAZMAT_BULK: Decimal("5000000.00"),
}
AUTO_LIABILITY = "AL"
FEDERAL_MINIMUM_CODE = "federal-minimum"
FEDERAL_MINIMUM_NAME = "Federal minimum (49 CFR 387.9)"
FEDERAL_MINIMUM_RULES = [{"kind": FEDERAL_MINIMUM}]

# Lines that are not an amount of cover: never "the highest limit" of a policy.
NOT_COVER = {LimitName.DEDUCTIBLE.value, LimitName.RETENTION.value}
# The auto-liability amount the federal minimum is judged on (49 CFR 387.9 sets a floor per
# accident on bodily injury and property damage together, nothing else): a policy's Combined
# Single Limit; else, for split limits, the lowest of its split lines, with property damage and
# at least one bodily-injury line listed (an accident of that amount, all bodily injury to one
# person or all property damage, is paid in full only when every line reaches it); else none.
# Physical damage, cargo, medical, aggregates and the like never count, unlike a `coverage`
# rule's default (its highest limit).
COMBINED_SINGLE_LIMIT = LimitName.COMBINED_SINGLE_LIMIT.value
BODILY_INJURY = {
    LimitName.BODILY_INJURY_PER_PERSON.value,
    LimitName.BODILY_INJURY_PER_ACCIDENT.value,
}
PROPERTY_DAMAGE = LimitName.PROPERTY_DAMAGE.value
SPLIT_LIABILITY = {*BODILY_INJURY, PROPERTY_DAMAGE}
_LIMIT_NAMES = {name.lower(): name for name in LimitName.values}


def _amount(raw, where: str) -> str:
    if not isinstance(raw, str):  # a JSON number too: money is a decimal string (section 6)
        raise ValidationError({where: not_money_text_message(raw)})
    try:
        value = money_text(raw)
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite():
        raise ValidationError({where: f"'{raw}' is not an amount."})
    if value < 0:
        raise ValidationError({where: "An amount cannot be negative."})
    if value > MAX_AMOUNT or value != value.quantize(CENT):
        raise ValidationError({where: "At most 12 digits before the point and 2 after it."})
    return format_money(value)


def _coverage_rule(rule: dict, where: str, coverage_codes: set[str]) -> dict:
    raw_type = rule.get("coverage_type")
    if not isinstance(raw_type, str) or not raw_type.strip():
        raise ValidationError({f"{where}.coverage_type": "A coverage rule names a coverageType."})
    code = raw_type.strip().upper()
    if code not in coverage_codes:
        raise ValidationError({f"{where}.coverage_type": f"Unknown coverage type '{raw_type}'."})
    minimum = rule.get("minimum_limit")
    limit_name = rule.get("limit_name")
    clean = {"kind": COVERAGE, "coverage_type": code, "minimum_limit": None, "limit_name": None}
    if minimum is not None:
        clean["minimum_limit"] = _amount(minimum, f"{where}.minimum_limit")
    if limit_name is not None:
        if minimum is None:
            raise ValidationError({f"{where}.limit_name": "A limitName needs a minimumLimit."})
        name = _LIMIT_NAMES.get(str(limit_name).strip().lower())
        if name is None:
            raise ValidationError({f"{where}.limit_name": f"Unknown limit name '{limit_name}'."})
        if name in NOT_COVER:  # never compared as cover (the highest limit skips it too)
            raise ValidationError(
                {f"{where}.limit_name": f"A {name.lower()} is not an amount of cover."}
            )
        clean["limit_name"] = name
    return clean


def rules_clean(raw, *, coverage_codes: set[str] | None = None) -> list[dict]:
    """Validate a profile's rules and return them normalized; a ValidationError names the
    offending rule as `rules.<index>.<property>`."""
    if not isinstance(raw, list):
        raise ValidationError({"rules": "Expected a list of rules."})
    if not raw:
        raise ValidationError({"rules": "A profile has at least one rule."})
    if len(raw) > MAX_RULES:
        raise ValidationError({"rules": f"At most {MAX_RULES} rules."})
    if coverage_codes is None:
        coverage_codes = set(CoverageType.objects.values_list("code", flat=True))
    clean: list[dict] = []
    seen_kinds: set[str] = set()
    seen_types: set[str] = set()
    for index, given in enumerate(raw):
        where = f"rules.{index}"
        if not isinstance(given, dict):
            raise ValidationError({where: "A rule is an object with a kind."})
        try:  # keys as the API's parser reads them, each property once
            rule = underscoreize({str(key): value for key, value in given.items()})
        except KeySentTwice as exc:
            at = ".".join([where, *exc.path, snake(exc.keys[0])])
            raise ValidationError({at: REPEATED_FIELD_MESSAGE}) from None
        kind = rule.get("kind")
        if kind not in KINDS:
            raise ValidationError(
                {f"{where}.kind": f"Unknown kind '{kind}'; expected one of {', '.join(KINDS)}."}
            )
        unknown = set(rule) - PROPERTIES[kind] - {"kind"}
        if unknown:
            raise ValidationError(
                {where: f"A {kind} rule does not take {', '.join(sorted(unknown))}."}
            )
        if kind == COVERAGE:
            item = _coverage_rule(rule, where, coverage_codes)
            if item["coverage_type"] in seen_types:
                raise ValidationError(
                    {f"{where}.coverage_type": "Coverage type required twice in one profile."}
                )
            seen_types.add(item["coverage_type"])
        else:
            if kind in seen_kinds:
                raise ValidationError({f"{where}.kind": f"Only one {kind} rule per profile."})
            item = {"kind": kind}
            if kind == INSURER_RATING:
                minimum = rule.get("minimum")
                if not isinstance(minimum, str) or minimum.strip().upper() not in AM_BEST_ORDER:
                    raise ValidationError(
                        {
                            f"{where}.minimum": f"Unknown AM Best rating '{minimum}'; expected "
                            f"one of {', '.join(AM_BEST_ORDER)}."
                        }
                    )
                item["minimum"] = minimum.strip().upper()
            elif kind == EXPIRATION_NOTICE:
                days = rule.get("days")
                if isinstance(days, bool) or not isinstance(days, int):
                    raise ValidationError({f"{where}.days": "Expected a whole number of days."})
                if not 1 <= days <= MAX_NOTICE_DAYS:
                    raise ValidationError(
                        {f"{where}.days": f"Between 1 and {MAX_NOTICE_DAYS} days."}
                    )
                item["days"] = days
        seen_kinds.add(kind)
        clean.append(item)
    checks = {INSURER_RATING, ADDITIONAL_INSURED, WAIVER_OF_SUBROGATION, EXPIRATION_NOTICE}
    if seen_kinds & checks and not seen_kinds & {COVERAGE, FEDERAL_MINIMUM}:
        raise ValidationError(
            {
                "rules": "Rating, endorsement and expiration rules apply to the required "
                "coverages: add a coverage or federal_minimum rule."
            }
        )
    return clean


def required_types(rules: list[dict]) -> list[str]:
    """The coverage types a profile requires, in rule order (auto liability for the federal
    minimum)."""
    types = [r["coverage_type"] for r in rules if r["kind"] == COVERAGE]
    if any(r["kind"] == FEDERAL_MINIMUM for r in rules) and AUTO_LIABILITY not in types:
        types.append(AUTO_LIABILITY)
    return types
