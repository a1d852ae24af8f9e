"""Coverage writes (contract section 10): periods and their event log."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Min, Q
from django.utils import timezone
from rest_framework.exceptions import NotFound
from simple_history.utils import bulk_update_with_history

from apps.core.dates import today
from apps.core.services import client_lock_first, live_reference
from apps.coverages.choices import (
    DRIVER_STATUSES,
    ENDING_STATUSES,
    VEHICLE_STATUSES,
    CoverageStatus,
)
from apps.coverages.models import LATEST_FIRST, CoverageEvent, DriverCoverage, VehicleCoverage
from apps.coverages.status import status_watch
from apps.drivers.models import Driver
from apps.events.records import record
from apps.events.services import event_emit, events_emit_many
from apps.policies.choices import PolicyStatus
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle


@dataclass(frozen=True)
class Subject:
    """What differs between scheduling a unit and scheduling a driver."""

    model: type  # Vehicle or Driver
    coverage: type  # VehicleCoverage or DriverCoverage
    field: str  # "vehicle" or "driver"
    scheduled_status: int
    allowed_statuses: frozenset[int]
    schedules_attr: str  # the CoverageType flag the policy's line must have
    noun: str


VEHICLE = Subject(
    Vehicle,
    VehicleCoverage,
    "vehicle",
    CoverageStatus.SCHEDULED_UNIT,
    frozenset(VEHICLE_STATUSES),
    "schedules_units",
    "unit",
)
DRIVER = Subject(
    Driver,
    DriverCoverage,
    "driver",
    CoverageStatus.SCHEDULED_DRIVER,
    frozenset(DRIVER_STATUSES),
    "schedules_drivers",
    "driver",
)


def _visible(user, model, pk: int, field: str):
    """The record a scheduling names (`live_reference`): a policy's or unit's move (which
    checks that nothing is scheduled on it) waits for this scheduling, or this one for the
    move."""
    queryset = model.objects.select_related("coverage_type") if model is Policy else model.objects
    return live_reference(queryset, user, pk, field=field)


def _pair(user, subject: Subject, target_id: int, policy_id: int):
    """The unit (or driver) and the policy a scheduling, or a change of one, names: each one the
    caller may see, live, of a live client (`_visible`), else a 400 on its field as if it did
    not exist, the same for another agency's and a missing one (contract section 4). The policy
    is locked before the unit, the order every write takes (a client, its policies, their
    units); a unit that is not there is still named first. The client's row is locked first by
    the caller (`client_lock_first`)."""
    policy_refused = None
    try:
        policy = _visible(user, Policy, policy_id, "policy_id")
    except ValidationError as refused:
        policy_refused = refused
    target = _visible(user, subject.model, target_id, f"{subject.field}_id")
    if policy_refused is not None:
        raise policy_refused
    return target, policy


def _emit(coverage, subject: Subject, kind: str, client) -> None:
    """`vehicle.scheduled|removed|declined|rescheduled` (or `driver.…`) for the change."""
    event_emit(
        type=f"{subject.field}.{kind}",
        agency_id=client.agency_id,
        client_id=client.pk,
        data=record(f"{subject.field}_coverage", coverage),
    )


# A period that ended stays ended: the unit (or driver) is scheduled again instead. The refusal
# says so, with how (`params["how"]`) in the caller's words: the API's by default ("with
# POST"); the admin puts its own (apps.coverages.admin) on the errors of this code.
SCHEDULE_AGAIN = "schedule_again"


def _schedule_again(message: str, **params) -> ValidationError:
    """The refusal of a change that would reopen an ended period; `message` ends with
    "…again %(how)s."."""
    return ValidationError(message, code=SCHEDULE_AGAIN, params={**params, "how": "with POST"})


def _watched(subject: Subject, pk: int) -> list[int]:
    return [pk] if subject is VEHICLE else []


def _last_end(periods) -> dt.date | None:
    """When the last of these periods ended (None: none has)."""
    return max((p.policy_removed_date for p in periods if p.policy_removed_date), default=None)


def _check_after_earlier_periods(periods, added: dt.date) -> None:
    """A pair's periods follow one another: a period may not start before an earlier one of the
    pair ended (`periods`: the pair's other periods). So the pair's open period, when it has
    one, is also its latest by added date (the policy's unit list's; `LATEST_FIRST` puts it
    first for the PUT and the admin)."""
    ended = _last_end(periods)
    if ended is not None and added < ended:
        raise ValidationError(
            {
                "policy_added_date": "Cannot precede the end of an earlier period on this "
                f"policy ({ended.isoformat()})."
            }
        )


def _outside_term(policy: Policy, day: dt.date) -> str:
    """The refusal of a date outside the policy's term: the whole term and the bound the date
    crosses (its start, or its end: the expiration, or a cancellation that comes first)."""
    start, end = policy.effective_date.isoformat(), policy.ends_on.isoformat()
    crossed = (
        f"the policy starts on {start}"
        if day < policy.effective_date
        else f"the policy ends on {end}"
    )
    return f"Must be inside the policy term ({start} to {end}): {crossed}."


def _check_schedulable(policy: Policy, added: dt.date) -> None:
    """A period starts on a day the policy can cover (`Policy.schedulable_on`); refused, the
    message names the term and the bound the date crosses (`_outside_term`)."""
    if not policy.schedulable_on(added):
        raise ValidationError({"policy_added_date": _outside_term(policy, added)})


def _check_removable(policy: Policy, coverage, removed: dt.date) -> None:
    """A removal or decline takes effect by the policy's end at the latest (`ends_on`, the
    first day out of force: on it, the unit was covered through the policy's last day). Later,
    it would declare the unit covered, or its coverage declined, past the term, and a
    rescheduling, which starts where the earlier period ended, would start outside it. A period
    that starts after the end (the policy was cut short after it was scheduled) may still be
    removed on its first day: it never covers a day."""
    if removed > max(policy.ends_on, coverage.policy_added_date):
        raise ValidationError({"policy_removed_date": _outside_term(policy, removed)})


def _log(coverage, subject: Subject, *, user, effective_date: dt.date) -> None:
    CoverageEvent.objects.create(
        **{f"{subject.field}_coverage": coverage},
        policy_id=coverage.policy_id,
        coverage_status=coverage.coverage_status,
        effective_date=effective_date,
        policy_added_date=coverage.policy_added_date,
        policy_removed_date=coverage.policy_removed_date,
        created_by=user,
    )


@transaction.atomic
def coverage_assign(
    *,
    user,
    subject: Subject,
    target_id: int,
    policy_id: int,
    policy_added_date: dt.date | None = None,
):
    """Schedule a unit or driver (`target_id`, a vehicle's or a driver's id as `subject`
    says) on a policy of the same client: a new period, status 4 or 7."""
    # The policy's row before the unit's (`_pair`): the order every write takes (a client, its
    # policies, their units), so a client's move and a scheduling never wait on each other
    # crosswise (a deadlock).
    client_lock_first(Policy, policy_id)  # a deletion or move of the client comes first
    target, policy = _pair(user, subject, target_id, policy_id)
    if target.client_id != policy.client_id:
        raise ValidationError(
            {"policy_id": f"The policy and the {subject.noun} belong to different clients."}
        )
    if not getattr(policy.coverage_type, subject.schedules_attr):
        raise ValidationError(
            {"policy_id": f"{policy.coverage_type.name} policies do not schedule {subject.noun}s."}
        )
    status = policy.status_on(today())
    if status == PolicyStatus.ACTIVE:
        added = policy_added_date
        if added is None:
            raise ValidationError({"policy_added_date": "Required when the policy is active."})
        _check_schedulable(policy, added)
    elif status == PolicyStatus.FUTURE:
        added = policy.effective_date  # or, below, the end of an earlier period if later
    else:
        raise ValidationError({"policy_id": f"The policy is {status.lower()}."})
    # Lock the pair's rows so two concurrent schedulings cannot both pass the check; the
    # one-open-period constraint is the rule (full_clean() checks it, the database backs it).
    periods = list(
        subject.coverage.objects.select_for_update().filter(
            **{subject.field: target}, policy=policy
        )
    )
    if all(p.policy_removed_date is not None for p in periods):  # else a 409, below
        if status == PolicyStatus.FUTURE:
            # After the earlier period's end, if later: still a day the policy can cover.
            added = max(added, _last_end(periods) or added)
            _check_schedulable(policy, added)
        _check_after_earlier_periods(periods, added)
    coverage = subject.coverage(
        **{subject.field: target},
        policy=policy,
        coverage_status=subject.scheduled_status,
        policy_added_date=added,
        created_by=user,
        updated_by=user,
    )
    coverage.full_clean()
    with status_watch(vehicle_ids=_watched(subject, target.pk)):
        coverage.save()
        _log(coverage, subject, user=user, effective_date=added)
        _emit(coverage, subject, "scheduled", policy.client)  # then the unit's status
    return coverage


@transaction.atomic
def coverage_update(
    *,
    user,
    subject: Subject,
    target_id: int,
    policy_id: int,
    coverage_status: int,
    policy_added_date: dt.date | None = None,
    policy_removed_date: dt.date | None = None,
):
    """Change the latest period of a pair: remove (1), decline (2) or move its added date.

    An ended period stays ended: a removal or decline sent again (the same status, its date or
    none) changes nothing, and an end that has come may move earlier, never later (one still
    ahead may move either way). A later date, or the other ending status, would declare the
    unit covered, or differently uncovered, for days already answered; the unit is scheduled
    again instead (`SCHEDULE_AGAIN`: the refusal says how, in the caller's words). An open
    period moved to the added date it has changes nothing either (no save, no logged change,
    no event). A removal or decline takes effect by the policy's end at the latest
    (`_check_removable`)."""
    status = coverage_status
    if status not in subject.allowed_statuses:
        allowed = ", ".join(str(s) for s in sorted(subject.allowed_statuses))
        raise ValidationError({"coverage_status": f"Must be one of {allowed}."})
    # The client's row, the policy's, the unit's, then the period's, as every write takes them
    # (a client, its policies, their units, their periods): a deletion or move of the client, a
    # change of the policy's start (which moves its periods) and this change come one after the
    # other. The unit (or driver) and the policy are named as scheduling names them (`_pair`):
    # one the caller may not see, missing, deleted or of a deleted client is the same 400 on
    # its field; the 404 is for a pair the caller sees that was never scheduled.
    client_lock_first(Policy, policy_id)
    target, policy = _pair(user, subject, target_id, policy_id)
    coverage = (
        subject.coverage.objects.for_user(user)
        .select_for_update(of=("self",))
        .filter(**{subject.field: target}, policy=policy)
        .order_by(*LATEST_FIRST)
        .first()
    )
    if coverage is None:
        raise NotFound(f"The {subject.noun} has never been scheduled on this policy.")
    coverage.policy = policy  # read and locked above
    # A removal without a date takes effect today, or on the policy's end when that has come
    # (the unit was covered by nothing since: `_check_removable`), or on the period's first day
    # when that is still ahead (a future policy's unit): then it never covered a day.
    default_end = max(min(today(), policy.ends_on), coverage.policy_added_date)
    if status in ENDING_STATUSES and coverage.policy_removed_date is not None:
        ended = coverage.policy_removed_date
        came = ended <= today()
        # No date: the default, as for any removal; for an end that has come, the end itself
        # (the same removal sent again).
        policy_removed_date = policy_removed_date or (ended if came else default_end)
        if came and (status != coverage.coverage_status or policy_removed_date > ended):
            refused = _schedule_again(
                "The %(noun)s was removed or declined on %(ended)s; an end that has come may "
                "only move earlier. Schedule it again %(how)s.",
                noun=subject.noun,
                ended=ended.isoformat(),
            )
            raise ValidationError({"coverage_status": refused})
        if policy_removed_date == ended and status == coverage.coverage_status:
            return coverage  # sent again: nothing changes, nothing is announced
    if status in ENDING_STATUSES:
        removed = policy_removed_date or default_end
        if removed < coverage.policy_added_date:
            raise ValidationError({"policy_removed_date": "Cannot precede the policy added date."})
        _check_removable(policy, coverage, removed)
        coverage.coverage_status = status
        coverage.policy_removed_date = removed
        effective = removed
    else:
        added = policy_added_date
        if added is None:
            raise ValidationError({"policy_added_date": "Required to change the added date."})
        if coverage.policy_removed_date is not None:
            refused = _schedule_again(
                "The %(noun)s was removed or declined; schedule it again %(how)s.",
                noun=subject.noun,
            )
            raise ValidationError({"coverage_status": refused})
        _check_schedulable(coverage.policy, added)
        _check_after_earlier_periods(
            subject.coverage.objects.filter(
                **{f"{subject.field}_id": target_id}, policy_id=policy_id
            ).exclude(pk=coverage.pk),
            added,
        )
        if added == coverage.policy_added_date:
            return coverage  # the date it has: nothing changes, nothing is announced
        coverage.policy_added_date = added
        effective = added
    coverage.updated_by = user
    kind = {1: "removed", 2: "declined"}.get(status, "rescheduled")
    with status_watch(vehicle_ids=_watched(subject, target_id)):
        coverage.save()
        _log(coverage, subject, user=user, effective_date=effective)
        _emit(coverage, subject, kind, coverage.policy.client)  # then the unit's status
    return coverage


def coverage_periods_follow_start(*, user, policy: Policy, was: dt.date) -> int:
    """A future policy's units and drivers are scheduled from its effective date (contract
    section 10: the date sent is ignored), so when that date moves from `was` before the
    policy has started, their periods follow: moved earlier, the periods that started on `was`
    start on the new date; moved later, none starts before it, and a period that ended before
    it refuses the move (400: it would end before it starts), but for one removed on its first
    day, which never covered a day and moves whole. For the policy's update, in its
    transaction. A history row, a logged change and a `….rescheduled` event per period, written
    in bulk; how many periods moved."""
    start = policy.effective_date
    if start == was:
        return 0
    moved_count = 0
    now = timezone.now()
    client = policy.client
    for subject in (VEHICLE, DRIVER):
        periods = subject.coverage.objects.filter(policy=policy)
        # A period removed on its first day never covered a day (a removal without a date
        # before the policy started): it follows the start whole, never refuses it.
        never_covered = Q(policy_removed_date=F("policy_added_date"))
        ended = (
            periods.filter(policy_removed_date__lt=start)
            .exclude(never_covered)
            .order_by("policy_removed_date")
            .values_list("policy_removed_date", flat=True)
            .first()
        )
        if ended is not None:
            raise ValidationError(
                {
                    "effective_date": f"A {subject.noun} was removed from this policy on "
                    f"{ended.isoformat()}, before this date; its period would end before it "
                    "starts."
                }
            )
        if start > was:
            moving = periods.filter(policy_added_date__lt=start)
        else:
            moving = periods.filter(policy_added_date=was)
        moved = list(moving.select_for_update().order_by("pk"))
        for period in moved:
            if period.policy_removed_date == period.policy_added_date:
                period.policy_removed_date = start
            period.policy_added_date = start
            period.updated_by = user
            period.updated_at = now
        if not moved:
            continue
        bulk_update_with_history(
            moved,
            subject.coverage,
            ["policy_added_date", "policy_removed_date", "updated_by", "updated_at"],
            batch_size=500,
            default_user=user,
        )
        CoverageEvent.objects.bulk_create(
            [
                CoverageEvent(
                    **{f"{subject.field}_coverage": period},
                    policy_id=policy.pk,
                    coverage_status=period.coverage_status,
                    effective_date=start,
                    policy_added_date=start,
                    policy_removed_date=period.policy_removed_date,
                    created_by=user,
                )
                for period in moved
            ],
            batch_size=500,
        )
        events_emit_many(
            [
                {
                    "type": f"{subject.field}.rescheduled",
                    "agency_id": client.agency_id,
                    "client_id": client.pk,
                    "data": record(f"{subject.field}_coverage", period),
                }
                for period in moved
            ]
        )
        moved_count += len(moved)
    return moved_count


def coverage_periods_check_end(*, policy: Policy) -> None:
    """A policy's expiration, moved earlier, may not come on or before the start of a period
    scheduled on it: such a period would lie wholly outside the term (listed on the unit's
    schedule, never covering a day). Refused with a 400 on `expiration_date` naming how many
    units and drivers start that late, so nothing is dropped silently: staff remove them first
    or choose a later date. A period removed on its first day never covered a day and does not
    count (it is what removing a period not started yet leaves), as when the start moves
    (`coverage_periods_follow_start`). A period starting before the new end and removed after
    it stays as recorded: it covers through the policy's last day (`Coverage.covered_on`). For
    the policy's update, in its transaction; two queries."""
    end = policy.expiration_date
    late, starts = [], []
    for subject in (VEHICLE, DRIVER):
        found = (
            subject.coverage.objects.filter(policy=policy, policy_added_date__gte=end)
            .exclude(policy_removed_date=F("policy_added_date"))
            .aggregate(count=Count("pk"), first=Min("policy_added_date"))
        )
        if found["count"]:
            late.append((found["count"], subject.noun))
            starts.append(found["first"])
    if not late:
        return
    counted = " and ".join(f"{n} {noun}" if n == 1 else f"{n} {noun}s" for n, noun in late)
    verb = "is" if sum(n for n, _ in late) == 1 else "are"
    first = min(starts)
    raise ValidationError(
        {
            "expiration_date": f"{counted} {verb} scheduled on this policy to start "
            f"on or after this date (the first on {first.isoformat()}): remove them from the "
            "policy first, or choose a later date; a period cannot start after the policy ends."
        }
    )
