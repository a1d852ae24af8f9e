"""Events that depend only on the calendar (contract section 14), emitted once a day.

One set-based query finds every policy that became effective, reaches 30 or 7 days before
expiring, or expired on the day; a unique (policy, event, day) mark makes the job idempotent
(a second run the same day, or two workers, emit nothing new); the 30- and 7-day expiring
notices are two events with two marks. The status changes the day causes are computed for
the affected clients and units only, in two queries each; the units include those whose
period starts or ends on the day (a removal or an addition dated in the future when it was
made is announced on the day it takes effect). A status already announced on the day by a
write is not announced again.

Days on which no worker ran are caught up (`calendar_catch_up`): every day after the last one
claimed, oldest first, at most CALENDAR_CATCH_UP_DAYS back (31 by default), each in a
transaction of its own and each as set-based as a normal day. A missed day's events are
recorded late (`occurredAt` is when they were recorded) with the missed day as `asOf`; a
policy recorded after that day is not announced for it (its own write was), and a client or
unit whose status a later write already announced is left out of it, so the last status event
of each is always its current status.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Max, Q
from django.utils import timezone

from apps.compliance.monitoring import compliance_changes_for_day
from apps.core.dates import today
from apps.coverages.models import VehicleCoverage
from apps.coverages.status import client_statuses, status_events, vehicle_statuses
from apps.events.models import CalendarMark
from apps.events.selectors import Watched, already_announced
from apps.events.services import events_emit_many
from apps.policies.choices import PolicyStatus
from apps.policies.models import Policy, policy_status, policy_will_expire

EXPIRING_DAYS = (30, 7)
DAY = dt.timedelta(days=1)
# The key of the PostgreSQL advisory lock the day's job and a policy's write take
# (`_calendar_lock`); any constant no other lock of this database uses.
CALENDAR_LOCK_KEY = 0x63616C656E646172  # "calendar"

logger = logging.getLogger("apps.coverages.calendar")


def _policy_data(policy: dict, **extra) -> dict:
    return {
        "policy_id": policy["id"],
        "policy_number": policy["policy_number"],
        "client_id": policy["client_id"],
        "coverage_type": policy["coverage_type__code"],
        "effective_date": policy["effective_date"],
        "expiration_date": policy["expiration_date"],
        **extra,
    }


def _expiring_on(day: dt.date) -> list[dt.date]:
    """The expiration dates whose notice falls on `day` (30 and 7 days before)."""
    return [day + dt.timedelta(days=n) for n in EXPIRING_DAYS]


def _day_policies(day: dt.date, condition: Q) -> list[dict]:
    """The live policies recorded by the end of `day` that match `condition`."""
    # A policy recorded after the day (a missed day caught up later) was announced by its
    # own write, not by the day.
    day_end = dt.datetime.combine(day + DAY, dt.time.min, tzinfo=timezone.get_current_timezone())
    return list(
        Policy.objects.live("client")
        .filter(created_at__lt=day_end)
        .filter(condition)
        .values(
            "id",
            "policy_number",
            "client_id",
            "client__agency_id",
            "coverage_type__code",
            "effective_date",
            "expiration_date",
            "cancellation_date",
        )
        .order_by("id")
    )


def _wanted(policies: list[dict], day: dt.date) -> list[tuple[str, dict, dict]]:
    """The calendar events the day brings to `policies`: (type, policy, extra data)."""
    expiring = _expiring_on(day)
    wanted = []
    for policy in policies:
        dates = {
            "effective_date": policy["effective_date"],
            "expiration_date": policy["expiration_date"],
            "cancellation_date": policy["cancellation_date"],
        }
        if policy_status(day, **dates) == PolicyStatus.CANCELLED:
            continue  # its status change is still computed below
        if policy["effective_date"] == day:
            wanted.append(("policy.effective", policy, {}))
        if policy["expiration_date"] == day:
            wanted.append(("policy.expired", policy, {}))
        # Expiring only when it will expire, as the day's `policy.expired` requires. One
        # cancelled effective on or before that date ends by its cancellation
        # (`policy.cancelled` announced it), never by expiring.
        if not policy_will_expire(**dates):
            continue
        for n, when in zip(EXPIRING_DAYS, expiring, strict=True):
            if policy["expiration_date"] == when:
                wanted.append(("policy.expiring", policy, {"days_left": n}))
    return wanted


def _mark(type_: str, policy: dict, extra: dict, day: dt.date) -> CalendarMark:
    """The mark that claims one calendar event: the 30- and the 7-day `policy.expiring` notices
    are two events, so their marks differ (`policy.expiring:30`, `policy.expiring:7`); a
    policy moved from one mark onto the other on the same day gets both."""
    days_left = extra.get("days_left")
    key = type_ if days_left is None else f"{type_}:{days_left}"
    return CalendarMark(policy_id=policy["id"], type=key, day=day)


def _items(wanted: list[tuple[str, dict, dict]], day: dt.date) -> list[dict]:
    return [
        {
            "type": type_,
            "agency_id": policy["client__agency_id"],
            "client_id": policy["client_id"],
            "data": _policy_data(policy, as_of=day, **extra),
        }
        for type_, policy, extra in wanted
    ]


def calendar_events_emit(*, day: dt.date) -> int:
    """Emit the day's calendar events and the status and compliance changes they cause; how
    many. In the order a write announces (apps.coverages.status): what the day brought
    (`policy.effective`, `policy.expired`), then the statuses and verdicts it changed, then
    the notices (`policy.expiring`). Call inside a transaction that has claimed the day (see
    `calendar_run`)."""
    policies = _day_policies(
        day,
        Q(effective_date=day)
        | Q(expiration_date=day)
        | Q(expiration_date__in=_expiring_on(day))
        | Q(cancellation_date=day),
    )
    wanted = _wanted(policies, day)
    # The unique (policy, type, day) constraint: a second emission for the same day fails.
    CalendarMark.objects.bulk_create([_mark(t, p, extra, day) for t, p, extra in wanted])
    client_ids = {p["client_id"] for p in policies}
    # Units whose status may move today: those on the policies above, and those whose period
    # starts or ends today (an addition or a removal dated in the future when it was made).
    vehicle_ids = set(
        VehicleCoverage.objects.filter(
            Q(policy_id__in_list=[p["id"] for p in policies])
            | Q(policy_added_date=day)
            | Q(policy_removed_date=day)
        )
        .values_list("vehicle_id", flat=True)
        .distinct()
    )
    notices = [w for w in wanted if w[0] == "policy.expiring"]
    came = [w for w in wanted if w[0] != "policy.expiring"]
    emitted = _statuses_emit(day, came, client_ids, vehicle_ids)
    # What time alone changed in compliance verdicts (contract section 15).
    emitted += compliance_changes_for_day(day=day)
    if notices:
        emitted += len(events_emit_many(_items(notices, day)))
    return emitted


def _statuses_emit(day: dt.date, came: list, client_ids: set, vehicle_ids: set) -> int:
    """Emit what the day brought (`came`) and the status changes of these clients and units
    since yesterday, but those a write announced already on the day; how many."""
    if not client_ids and not vehicle_ids and not came:
        return 0
    yesterday = day - DAY
    before_c, after_c = client_statuses(client_ids, yesterday), client_statuses(client_ids, day)
    before_v, after_v = vehicle_statuses(vehicle_ids, yesterday), vehicle_statuses(vehicle_ids, day)
    # {client id: (agency id, status)}, {unit id: (agency id, client id, status)}
    already_announced(
        day=day,
        watched={
            "carrier.status_changed": Watched(before_c, after_c, ("clientId",), 1),
            "vehicle.status_changed": Watched(before_v, after_v, ("vehicleId",), 2),
        },
    )
    items = _items(came, day) + status_events(before_c, after_c, before_v, after_v, day)
    if not items:
        return 0
    return len(events_emit_many(items))


def _calendar_lock(*, shared: bool) -> None:
    """Order a policy's write and the day's job on PostgreSQL, until the caller's transaction
    ends: the job takes the lock alone, writes share it. Without it, a write committing while
    the job ran was seen by neither: the job's reads did not see the uncommitted policy, and
    the write did not see the job's uncommitted day mark, so the notice never came. Now a job
    starting during such a write waits for its commit and finds the policy; a write reaching
    its notice during the job waits for the job's commit and finds the day done. Writers
    never wait for each other. SQLite serialises writers, so there is nothing to order."""
    if connection.vendor != "postgresql":
        return
    function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s)", [CALENDAR_LOCK_KEY])


def expiring_notice_on_write(*, policy: Policy) -> int:
    """Announce the `policy.expiring` notice of a policy written (created, or its expiration
    moved) on its 30- or 7-day mark after today's job has run; how many (0 or 1).

    Before the job runs, the job finds the policy as it is; after, the day is claimed and no
    job would look at it again, so the notice would never come. Claimed with the job's own
    (policy, notice, day) mark (`_mark`): each notice once, however many writes follow, and
    the 7-day notice still comes to a policy moved onto its mark on the day it had its 30-day
    one. Call inside the write's transaction, after the policy is saved.

    A write that leaves the policy off today's marks has nothing to announce and returns at
    once, without the lock: only a write landing on a mark waits for a running job (so most
    policy writes never wait for the day's job, nor hold their row locks while it runs)."""
    day = today()
    if policy.expiration_date not in _expiring_on(day):
        return 0
    _calendar_lock(shared=True)
    if not CalendarMark.objects.filter(**CalendarMark.DAY_RUN, day=day).exists():
        return 0  # the day's job will see the policy as it is now
    policies = _day_policies(day, Q(pk=policy.pk, expiration_date__in=_expiring_on(day)))
    wanted = []
    for type_, policy, extra in _wanted(policies, day):
        if type_ != "policy.expiring":
            continue  # the status a write moves, it announces itself (status_watch)
        mark = _mark(type_, policy, extra, day)
        _, claimed = CalendarMark.objects.get_or_create(
            policy_id=mark.policy_id, type=mark.type, day=mark.day
        )
        if claimed:
            wanted.append((type_, policy, extra))
    if not wanted:
        return 0
    return len(events_emit_many(_items(wanted, day)))


def calendar_run(*, day: dt.date) -> int:
    """Run the day's job once, whoever asks (start-up, the daily tick, a second worker): the
    day's marker is claimed in the same transaction as the events, so a concurrent run waits
    and then finds the day done; a failed run leaves the day unclaimed for the next try."""
    try:
        with transaction.atomic():
            _calendar_lock(shared=False)
            CalendarMark.objects.create(**CalendarMark.DAY_RUN, day=day)
            return calendar_events_emit(day=day)
    except IntegrityError:
        return 0


def calendar_days_due(*, day: dt.date) -> list[dt.date]:
    """The days whose job has not run, oldest first, through `day`: every day after the last
    one claimed, at most CALENDAR_CATCH_UP_DAYS back (one query); only `day` when no day was
    ever claimed (a new installation announces nothing of the days before it)."""
    days_run = CalendarMark.objects.filter(**CalendarMark.DAY_RUN, day__lt=day)
    last = days_run.aggregate(last=Max("day"))["last"]
    if last is None:
        return [day]
    first = last + DAY
    oldest = day - (settings.CALENDAR_CATCH_UP_DAYS - 1) * DAY
    if first < oldest:
        logger.warning(
            "calendar: no worker ran from %s to %s; catching up from %s only",
            first,
            oldest - DAY,
            oldest,
        )
        first = oldest
    return [first + n * DAY for n in range((day - first).days + 1)]


def calendar_catch_up(*, day: dt.date) -> int:
    """Run the job of every day not yet run through `day` (`calendar_days_due`), oldest first,
    each day once (`calendar_run`); how many events. What the worker runs at start-up and
    when the service day changes, so days on which no worker ran are not lost."""
    emitted = 0
    for missed in calendar_days_due(day=day):
        count = calendar_run(day=missed)
        if missed != day:
            logger.info("calendar %s caught up: %d events", missed, count)
        emitted += count
    return emitted
