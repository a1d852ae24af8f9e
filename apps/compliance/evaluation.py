"""The compliance verdict of one client or one unit under a profile (contract section 15).

Pure computation over what verification has already loaded (the client's policies with their
insurers and limits, and for a unit the policies it is scheduled on): no query is made here,
so a verdict costs the same whether one DOT or five hundred are checked.

A required coverage is met when *some* policy of its type meets it: each candidate policy is
judged and the one with the fewest hard, then soft, reasons answers (ties: the highest
limit), so a carrier with two auto liability policies is judged on its better one.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from apps.compliance.rules import (
    ADDITIONAL_INSURED,
    AUTO_LIABILITY,
    BODILY_INJURY,
    COMBINED_SINGLE_LIMIT,
    COVERAGE,
    EXPIRATION_NOTICE,
    FEDERAL_MINIMUM,
    FEDERAL_MINIMUMS,
    INSURER_RATING,
    NOT_COVER,
    PROPERTY_DAMAGE,
    SPLIT_LIABILITY,
    WAIVER_OF_SUBROGATION,
    required_types,
)
from apps.core.dates import shifted
from apps.core.money import format_money
from apps.masterdata.models import AM_BEST_ORDER

PASS, CAUTION, FAIL = "PASS", "CAUTION", "FAIL"
RESULTS = (PASS, CAUTION, FAIL)  # a verdict's results, best first
COVERAGE_MISSING = "COVERAGE_MISSING"
LIMIT_BELOW_MINIMUM = "LIMIT_BELOW_MINIMUM"
BELOW_FEDERAL_MINIMUM = "BELOW_FEDERAL_MINIMUM"
UNIT_NOT_SCHEDULED = "UNIT_NOT_SCHEDULED"
INSURER_RATING_BELOW_MINIMUM = "INSURER_RATING_BELOW_MINIMUM"
INSURER_UNRATED = "INSURER_UNRATED"
ADDITIONAL_INSURED_MISSING = "ADDITIONAL_INSURED_MISSING"
WAIVER_OF_SUBROGATION_MISSING = "WAIVER_OF_SUBROGATION_MISSING"
EXPIRES_SOON = "EXPIRES_SOON"
# Hard reasons fail the check; every other reason only cautions.
HARD = {COVERAGE_MISSING, LIMIT_BELOW_MINIMUM, BELOW_FEDERAL_MINIMUM, UNIT_NOT_SCHEDULED}
REASON_CODES = (
    COVERAGE_MISSING,
    LIMIT_BELOW_MINIMUM,
    BELOW_FEDERAL_MINIMUM,
    UNIT_NOT_SCHEDULED,
    INSURER_RATING_BELOW_MINIMUM,
    INSURER_UNRATED,
    ADDITIONAL_INSURED_MISSING,
    WAIVER_OF_SUBROGATION_MISSING,
    EXPIRES_SOON,
)


@dataclass(frozen=True)
class CompiledProfile:
    """A profile's rules arranged for evaluation, built once per request."""

    profile_id: int
    types: tuple[str, ...]
    coverage: dict[str, dict]
    minimums: dict[str, Decimal]  # the coverage rules' `minimumLimit`s, by type
    rating: str | None
    additional_insured: bool
    waiver: bool
    notice_days: int | None
    notice: dt.timedelta | None  # the notice's days, to add to a date
    federal: bool

    @classmethod
    def of(cls, profile) -> CompiledProfile:
        rules = profile.rules
        by_kind = {r["kind"]: r for r in rules if r["kind"] != COVERAGE}
        notice_days = by_kind.get(EXPIRATION_NOTICE, {}).get("days")
        return cls(
            profile_id=profile.id,
            types=tuple(required_types(rules)),
            coverage={r["coverage_type"]: r for r in rules if r["kind"] == COVERAGE},
            minimums={
                r["coverage_type"]: Decimal(r["minimum_limit"])
                for r in rules
                if r["kind"] == COVERAGE and r["minimum_limit"] is not None
            },
            rating=by_kind.get(INSURER_RATING, {}).get("minimum"),
            additional_insured=ADDITIONAL_INSURED in by_kind,
            waiver=WAIVER_OF_SUBROGATION in by_kind,
            notice_days=notice_days,
            notice=None if notice_days is None else dt.timedelta(days=notice_days),
            federal=FEDERAL_MINIMUM in by_kind,
        )


# Not frozen: a frozen dataclass is built through object.__setattr__, four times slower than
# this (560 ns against 130 ns), and a 1,000-unit batch with a profile builds thousands.
@dataclass(slots=True)
class Reason:
    """Why a requirement is not met (`ReasonSerializer` shapes it): the code, the coverage type
    it is about, what was required and what was found (as text), and a sentence."""

    code: str
    coverage_type: str | None
    required: str | None
    actual: str | None
    message: str

    @property
    def hard(self) -> bool:
        return self.code in HARD


@dataclass(slots=True)
class Verdict:
    """One client's or unit's verdict under a profile (`ComplianceSerializer` shapes it)."""

    profile_id: int
    result: str
    reasons: list[Reason]


def _limits(policy) -> list[tuple[str, Decimal]]:
    # Verification's policy rows (apps.coverages.rows) carry their limits as (name, amount)
    # rows, read in one query for all the policies of a call.
    return policy.limit_rows()


def policy_limit(policy, name: str | None) -> Decimal | None:
    """The named limit of a policy, or its highest amount of cover (never a deductible)."""
    limits = _limits(policy)
    if name is not None:
        return next((amount for limit, amount in limits if limit == name), None)
    return max((amount for limit, amount in limits if limit not in NOT_COVER), default=None)


def liability_limit(policy) -> Decimal | None:
    """The auto-liability amount of a policy, what the federal minimum is judged on: its
    Combined Single Limit; else, for split limits, the lowest of its split liability lines
    (bodily injury per person and per accident, property damage), when property damage and a
    bodily-injury line are listed: an accident of that amount is then paid in full however it
    splits; else None. Never another line: a policy listing only physical damage or cargo
    carries no liability cover, one listing only property damage none for bodily injury."""
    split: dict[str, Decimal] = {}
    for limit, amount in _limits(policy):
        if limit == COMBINED_SINGLE_LIMIT:
            return amount
        if limit in SPLIT_LIABILITY:
            split[limit] = amount
    if PROPERTY_DAMAGE not in split or not BODILY_INJURY & split.keys():
        return None
    return min(split.values())


def _cover_end(policy, day: dt.date, unit_schedule) -> tuple[dt.date, bool] | None:
    """Until when `policy`, in force on `day`, covers from it: the first day out of cover, and
    whether the unit's removal, not the policy's end, is what ends it. For a unit
    (`unit_schedule`, its periods by policy id), a period of the unit on the policy must also
    cover that day (None: none does), and ends the cover if it ends first."""
    ends = policy.ends_on
    if unit_schedule is None:
        return ends, False
    removals = [p.policy_removed_date for p in unit_schedule.get(policy.id, ()) if p.covers_on(day)]
    if not removals:
        return None
    if None in removals:
        return ends, False
    removed = max(removals)
    return (removed, True) if removed < ends else (ends, False)


@dataclass(slots=True)
class _Lapse:
    """Where a coverage's chain of renewals ends: the last policy of the chain (`renewals`
    after the first), the first day out of cover, whether the unit's removal ends it, and
    whether a policy taking over then falls short of the required limits."""

    policy: object
    ends: dt.date
    removed: bool
    renewals: int
    short: bool


def _lapse(
    compiled: CompiledProfile,
    code: str,
    same_type: list,
    cargo_class: str,
    horizon: dt.date,
    unit_schedule: dict[int, list] | None,
    start: tuple,
) -> _Lapse:
    """When a cover lapses (`start`: its policy, first day out and whether a removal ends
    it), following its renewals until one reaches past `horizon` (D plus the notice's days, at
    most 9999-12-31, which no policy in force reaches past, so the chain ends there too) or
    none takes over: a renewal is a policy of the line in force on the day the previous one
    ends, covering the unit that day (`_cover_end`), that meets the required limits; of
    several, the one covering longest. Works on the policies already loaded (`same_type`,
    those not ended on D): no query."""
    policy, ends, removed = start
    renewals, short = 0, False
    while ends <= horizon:
        taking_over = [
            (other, covered)
            for other in same_type
            if other.in_force_on(ends)
            and (covered := _cover_end(other, ends, unit_schedule)) is not None
        ]
        meeting = [
            (other, covered)
            for other, covered in taking_over
            if not _limit_reasons(compiled, code, other, cargo_class)
        ]
        if not meeting:
            short = bool(taking_over)
            break
        policy, (ends, removed) = max(meeting, key=lambda item: item[1][0])
        renewals += 1
    return _Lapse(policy, ends, removed, renewals, short)


def _federal_floor(compiled: CompiledProfile, code: str, cargo_class: str) -> Decimal | None:
    """49 CFR 387.9's floor for the cargo class, when the profile asks for it and the type is
    auto liability (None: not asked)."""
    if compiled.federal and code == AUTO_LIABILITY:
        return FEDERAL_MINIMUMS[cargo_class]
    return None


def _binding_minimum(compiled: CompiledProfile, code: str, cargo_class: str) -> Decimal | None:
    """The least a policy of the type must carry to meet both limit requirements: the higher
    of the rule's minimum and the federal floor (what a missing coverage requires)."""
    minimum, floor = compiled.minimums.get(code), _federal_floor(compiled, code, cargo_class)
    if minimum is None or floor is None:
        return floor if minimum is None else minimum
    return max(minimum, floor)


def _limit_reasons(compiled: CompiledProfile, code: str, policy, cargo_class) -> list[Reason]:
    """The reasons one policy's limits give, each requirement for itself (the rule's minimum
    on its limit, the federal floor on the auto-liability amount, `liability_limit`): both
    fail the verdict."""
    reasons = []
    minimum = compiled.minimums.get(code)
    if minimum is not None:
        rule = compiled.coverage[code]
        amount = policy_limit(policy, rule["limit_name"])
        if amount is None or amount < minimum:
            named = rule["limit_name"] or "highest limit"
            reasons.append(
                Reason(
                    LIMIT_BELOW_MINIMUM,
                    code,
                    format_money(minimum),
                    format_money(amount),
                    f"{code} {named} {format_money(amount) or 'none'} is below the required "
                    f"{format_money(minimum)} (policy {policy.policy_number or policy.id}).",
                )
            )
    floor = _federal_floor(compiled, code, cargo_class)
    if floor is not None:
        amount = liability_limit(policy)
        if amount is None or amount < floor:
            reasons.append(
                Reason(
                    BELOW_FEDERAL_MINIMUM,
                    code,
                    format_money(floor),
                    format_money(amount),
                    f"Auto liability {format_money(amount) or 'none'} is below the federal minimum "
                    f"{format_money(floor)} for {cargo_class} (49 CFR 387.9).",
                )
            )
    return reasons


def _judge(
    compiled: CompiledProfile, code: str, policy, same_type, cargo_class, on, unit_schedule=None
) -> list[Reason]:
    """Every reason one policy gives against the requirements on its coverage type."""
    reasons = _limit_reasons(compiled, code, policy, cargo_class)
    if compiled.rating is not None:
        insurer = policy.insurer
        rating = insurer.am_best_rating if insurer is not None else ""
        if not rating:
            reasons.append(
                Reason(
                    INSURER_UNRATED,
                    code,
                    compiled.rating,
                    None,
                    f"The {code} insurer "
                    f"{'(none named)' if insurer is None else insurer.name} has no AM Best "
                    "rating on file.",
                )
            )
        elif AM_BEST_ORDER[rating] > AM_BEST_ORDER[compiled.rating]:
            reasons.append(
                Reason(
                    INSURER_RATING_BELOW_MINIMUM,
                    code,
                    compiled.rating,
                    rating,
                    f"The {code} insurer {insurer.name} is rated {rating}, below "
                    f"{compiled.rating}.",
                )
            )
    if compiled.additional_insured and not policy.additional_insured:
        reasons.append(
            Reason(
                ADDITIONAL_INSURED_MISSING,
                code,
                "true",
                "false",
                f"The {code} policy does not name the certificate holder as additional insured.",
            )
        )
    if compiled.waiver and not policy.subrogation_waived:
        reasons.append(
            Reason(
                WAIVER_OF_SUBROGATION_MISSING,
                code,
                "true",
                "false",
                f"The {code} policy carries no waiver of subrogation.",
            )
        )
    if compiled.notice_days is not None:
        reasons.extend(
            _expires_soon(compiled, code, policy, same_type, cargo_class, on, unit_schedule)
        )
    return reasons


def _days(n: int) -> str:
    """A number of days as the notice's reasons write it, in `required` and the message."""
    return "1 day" if n == 1 else f"{n} days"


def _expires_soon(
    compiled: CompiledProfile, code: str, policy, same_type, cargo_class, on, unit_schedule
) -> list[Reason]:
    """EXPIRES_SOON when the cover `policy` gives on D lapses within the notice (`_lapse`),
    else nothing."""
    ends, removed = _cover_end(policy, on, unit_schedule) or (policy.ends_on, False)
    horizon = shifted(on, compiled.notice)  # at most 9999-12-31: a policy can end no later
    if ends > horizon:  # most policies: not a renewal to look for
        return []
    lapse = _lapse(
        compiled, code, same_type, cargo_class, horizon, unit_schedule, (policy, ends, removed)
    )
    left = (lapse.ends - on).days
    if left > compiled.notice_days:
        return []
    ends = lapse.ends.isoformat()
    what = f"{code} policy's renewal" if lapse.renewals else f"{code} policy"
    if lapse.removed:
        lapses = f"This unit is removed from the {what} on {ends}"
    elif lapse.ends == lapse.policy.expiration_date:
        lapses = f"The {what} expires on {ends}"
    else:
        lapses = f"The {what} is cancelled from {ends}"
    if lapse.short:
        missing = "; the renewal after it" if lapse.renewals else "; its renewal"
        missing += " falls short of the required limits"
    else:
        missing = (
            ", with no further renewal on file" if lapse.renewals else ", with no renewal on file"
        )
    return [
        Reason(
            EXPIRES_SOON,
            code,
            _days(compiled.notice_days),
            ends,
            f"{lapses}, in {_days(left)}{missing}.",
        )
    ]


def _best(candidates_reasons: list[tuple]) -> list[Reason]:
    if len(candidates_reasons) == 1:
        return candidates_reasons[0][1]

    def key(item):
        policy, reasons = item
        hard = sum(r.hard for r in reasons)
        return (hard, len(reasons) - hard, -(policy_limit(policy, None) or 0))

    return min(candidates_reasons, key=key)[1]


def verdict(
    compiled: CompiledProfile,
    *,
    policies: list,
    cargo_class: str,
    on: dt.date,
    unit_policies: list | None = None,
    unit_schedule: dict[int, list] | None = None,
) -> Verdict:
    """The verdict of one result (its `compliance` object).

    `policies` are the client's policies from verification (in force on D and later ones);
    `unit_policies`, for a unit, the policies it is scheduled on and covered by on D, and
    `unit_schedule` its periods on policies not ended on D, by policy id (each with
    `covers_on` and `policy_removed_date`), read when the profile has an expiration notice: the
    unit's cover lapses when its period ends (a removal already set) or its policy does, and a
    renewal takes over for the unit only if one of its periods covers the unit by then.
    """
    reasons: list[Reason] = []
    by_type: dict[str, list] = {}
    for policy in policies:
        by_type.setdefault(policy.coverage_type.code, []).append(policy)
    on_unit_by_type: dict[str, list] = {}
    for policy in unit_policies or ():
        on_unit_by_type.setdefault(policy.coverage_type.code, []).append(policy)
    for code in compiled.types:
        same_type = by_type.get(code, [])
        in_force = [p for p in same_type if p.in_force_on(on)]
        candidates = in_force
        schedule = None
        if unit_policies is not None:
            on_unit = on_unit_by_type.get(code, [])
            schedules_units = (
                in_force[0].coverage_type.schedules_units if in_force else bool(on_unit)
            )
            if schedules_units:
                if not on_unit and in_force:
                    reasons.append(
                        Reason(
                            UNIT_NOT_SCHEDULED,
                            code,
                            None,
                            None,
                            f"The client has {code} in force on {on.isoformat()}, but this "
                            "unit is not scheduled on it.",
                        )
                    )
                    continue
                candidates = on_unit
                schedule = unit_schedule or {}
        if not candidates:
            reasons.append(
                Reason(
                    COVERAGE_MISSING,
                    code,
                    format_money(_binding_minimum(compiled, code, cargo_class)),
                    None,
                    f"No {code} policy in force on {on.isoformat()}.",
                )
            )
            continue
        judged = [
            (p, _judge(compiled, code, p, same_type, cargo_class, on, schedule)) for p in candidates
        ]
        reasons.extend(_best(judged))
    if any(r.hard for r in reasons):
        result = FAIL
    elif reasons:
        result = CAUTION
    else:
        result = PASS
    return Verdict(compiled.profile_id, result, reasons)
