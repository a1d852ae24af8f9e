"""Writes of policies: every business rule of a policy lives here."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TypedDict, Unpack

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet

from apps.agencies.models import Producer
from apps.clients.models import Client
from apps.clients.selectors import visible_client
from apps.core.dates import today
from apps.core.services import (
    left_behind,
    links_clear,
    locked_for_update,
    model_update,
    rows_lock,
)
from apps.coverages.calendar import expiring_notice_on_write
from apps.coverages.services import coverage_periods_check_end, coverage_periods_follow_start
from apps.coverages.status import status_watch
from apps.events.records import record, records_updated_emit
from apps.events.services import client_event_emit, record_event_emit
from apps.masterdata.models import CoverageType, Insurer, State, UnitType
from apps.policies.choices import PolicyStatus
from apps.policies.models import Policy, PolicyLimit, PolicyRate
from apps.policies.selectors import with_representation


class PolicyFields(TypedDict, total=False):
    """The plain fields of a policy a caller may set; the client and producer travel as ids."""

    policy_number: str | None
    coverage_type: CoverageType
    insurer: Insurer | None
    state: State | None
    effective_date: dt.date
    expiration_date: dt.date
    cancellation_date: dt.date | None
    premium: Decimal | None
    additional_insured: bool
    subrogation_waived: bool
    covered_autos: str
    description: str


class PolicyLimitRow(TypedDict):
    name: str
    amount: Decimal


class PolicyRateRow(TypedDict, total=False):
    unit_type: UnitType
    annual_rate: Decimal | None
    rate_per_100_value: Decimal | None
    minimum_premium: Decimal | None


class PolicyChanges(PolicyFields, total=False):
    """A partial update: any plain field, the client and producer, soft deletion, and the
    limits or rates, each replaced as a whole when given."""

    client_id: int
    producer_id: int | None
    producer_name: str | None
    deleted: bool
    limits: list[PolicyLimitRow] | None
    rates: list[PolicyRateRow] | None


POLICY_FIELDS = tuple(PolicyFields.__annotations__)


def _producer(
    agency_id: int, producer_id: int | None, producer_name: str | None
) -> Producer | None:
    """The producer named by id, else by name, in the policy's agency; none if neither."""
    if producer_id is not None:
        producer = Producer.objects.filter(pk=producer_id, agency_id=agency_id).first()
        if producer is None:
            raise ValidationError({"producer_id": "No producer with this id in the agency."})
        return producer
    if producer_name:
        producer = Producer.objects.filter(
            agency_id=agency_id, name__iexact=producer_name.strip()
        ).first()
        if producer is None:
            raise ValidationError({"producer_name": f"Unknown producer: '{producer_name}'."})
        return producer
    return None


def _replace_limits(policy: Policy, limits: list[PolicyLimitRow]) -> bool:
    """The policy's limits, in order; whether they changed."""
    names = [limit["name"] for limit in limits]
    if len(names) != len(set(names)):
        raise ValidationError({"limits": "Each limit may appear once."})
    if any(limit["amount"] < 0 for limit in limits):  # the API's and the admin's rule, once
        raise ValidationError({"limits": "A limit cannot be negative."})
    kept = list(policy.limits.order_by("position", "id").values_list("name", "amount"))
    if kept == [(limit["name"], limit["amount"]) for limit in limits]:
        return False
    policy.limits.all().delete()
    PolicyLimit.objects.bulk_create(
        PolicyLimit(policy=policy, name=limit["name"], amount=limit["amount"], position=n)
        for n, limit in enumerate(limits)
    )
    return True


RATE_FIELDS = ("annual_rate", "rate_per_100_value", "minimum_premium")


def _replace_rates(policy: Policy, rates: list[PolicyRateRow]) -> bool:
    """The policy's rating, one row per unit type, every amount zero or more; whether it
    changed."""
    unit_types = [rate["unit_type"].pk for rate in rates]
    if len(unit_types) != len(set(unit_types)):
        raise ValidationError({"rates": "Each unit type may be rated once."})
    for rate in rates:
        if any((rate.get(field) or 0) < 0 for field in RATE_FIELDS):
            raise ValidationError({"rates": "Rates and minimum premiums cannot be negative."})
    kept = set(policy.rates.values_list("unit_type_id", *RATE_FIELDS))
    wanted = {(rate["unit_type"].pk, *(rate.get(f) or 0 for f in RATE_FIELDS)) for rate in rates}
    if kept == wanted:
        return False
    policy.rates.all().delete()
    PolicyRate.objects.bulk_create(
        PolicyRate(
            policy=policy,
            unit_type=rate["unit_type"],
            **{field: rate.get(field) or 0 for field in RATE_FIELDS},
        )
        for rate in rates
    )
    return True


@transaction.atomic
def policy_create(
    *,
    user,
    client_id: int,
    producer_id: int | None = None,
    producer_name: str | None = None,
    deleted: bool = False,
    limits: list[PolicyLimitRow] | None = None,
    rates: list[PolicyRateRow] | None = None,
    **fields: Unpack[PolicyFields],
) -> Policy:
    """Create a policy for a client the user may see."""
    client = visible_client(user, client_id)
    policy = Policy(client=client, created_by=user, updated_by=user, **fields)
    policy.producer = _producer(client.agency_id, producer_id, producer_name) or client.producer
    policy.mark_deleted(deleted)
    policy.full_clean()
    with status_watch(client_ids=[client.pk]):  # its event, then the statuses it changed
        policy.save()
        _replace_limits(policy, limits or [])
        _replace_rates(policy, rates or [])
        client_event_emit(type="policy.created", client=client, data=record("policy", policy))
    expiring_notice_on_write(policy=policy)  # a notice comes last
    return policy


def _check_schedules(policy: Policy, coverage_type: CoverageType | None) -> None:
    """A new coverage type must schedule what the policy has scheduled (units, drivers), as
    scheduling them required (apps.coverages.services.coverage_assign)."""
    if coverage_type is None or coverage_type.pk == policy.coverage_type_id:
        return
    for flag, periods, noun in (
        ("schedules_units", policy.vehicle_coverages, "units"),
        ("schedules_drivers", policy.driver_coverages, "drivers"),
    ):
        if not getattr(coverage_type, flag) and periods.exists():
            raise ValidationError(
                {
                    "coverage_type": f"{coverage_type.name} policies do not schedule {noun}, "
                    f"and this policy has {noun} scheduled."
                }
            )


@transaction.atomic
def policy_update(*, user, instance: Policy, **changes: Unpack[PolicyChanges]) -> Policy:
    """Partial update; `deleted` soft-deletes or restores, `cancellation_date` cancels."""
    # Its client first, and the one it moves to, in id order, as every write takes them (a
    # client, its policies, their units): a client's move, a new policy of the client, this
    # change and a policy moving the other way come one after the other.
    clients = {instance.client_id, changes.get("client_id", instance.client_id)}
    rows_lock(Client.objects.filter(pk__in=clients))
    policy = locked_for_update(Policy.objects.select_related("client"), user, instance.pk)
    was = (policy.client_id, policy.deleted, policy.cancellation_date)
    data: dict = {**changes}
    client = policy.client
    moved = changes.get("client_id", policy.client_id) != policy.client_id
    if moved:
        if policy.vehicle_coverages.exists() or policy.driver_coverages.exists():
            raise ValidationError(
                {
                    "client_id": "A policy with scheduled units or drivers cannot move to "
                    "another client."
                }
            )
        client = data["client"] = visible_client(user, changes["client_id"])
    _check_schedules(policy, changes.get("coverage_type"))
    moves = client.agency_id != policy.client.agency_id
    named = changes.get("producer_name")  # a whole record sent back names its producer too
    if left_behind(changes, "producer_id", policy.producer_id, moves=moves) and (
        named is None or (policy.producer is not None and named == policy.producer.name)
    ):
        data["producer"] = None  # the old agency's producer does not follow it
    elif "producer_id" in changes or "producer_name" in changes:
        data["producer"] = _producer(
            client.agency_id, changes.get("producer_id"), changes.get("producer_name")
        )
    if "deleted" in changes:
        data.update(policy.deletion_changes(changes["deleted"]))
    units = policy.vehicle_coverages.values_list("vehicle_id", flat=True)
    # A policy not started yet schedules from its effective date: its periods follow it.
    was_start, was_end = policy.effective_date, policy.expiration_date
    not_started = policy.status_on(today()) == PolicyStatus.FUTURE
    left = (policy.client.agency_id, policy.client_id)  # where it was
    last_seen = record("policy", policy) if moves else None  # what the agency it leaves saw
    # The policy's event first, then what it moved (its periods), then the statuses it changed
    # (status_watch, when the block ends), then its notice.
    with status_watch(client_ids=[was[0], client.pk], vehicle_ids=list(units)):
        _, changed = model_update(
            instance=policy,
            fields=(*POLICY_FIELDS, "client", "producer", "deleted", "deleted_at"),
            data=data,
            user=user,
        )
        replaced = False
        if "limits" in changes:
            replaced = _replace_limits(policy, changes["limits"] or [])
        if "rates" in changes:
            replaced = _replace_rates(policy, changes["rates"] or []) or replaced
        if not (changed or replaced):
            return policy  # nothing to announce: an event means the policy changed
        if not changed:
            policy.updated_by = user  # the limits and rates are the policy's: it changed
            policy.save(update_fields=["updated_by", "updated_at"])
        _policy_event_emit(policy, was=was, left=left, last_seen=last_seen)
        if not_started and policy.effective_date != was_start:
            coverage_periods_follow_start(user=user, policy=policy, was=was_start)
        if policy.expiration_date < was_end:
            coverage_periods_check_end(policy=policy)  # no period left starting past it
        if moved:
            for document in policy.documents.all():  # a policy's documents follow it
                document.client = client
                document.save(update_fields=["client"])
    expiring_notice_on_write(policy=policy)
    return policy


def _policy_event_emit(policy: Policy, *, was: tuple, left: tuple, last_seen: dict | None) -> None:
    """`policy.updated`, or `.deleted`, `.restored` or `.cancelled` when the write did that
    (`was`: its client, deleted flag and cancellation date before)."""
    kind = "updated"
    if policy.deleted != was[1]:
        kind = "deleted" if policy.deleted else "restored"
    elif policy.cancellation_date is not None and policy.cancellation_date != was[2]:
        kind = "cancelled"
    record_event_emit(
        type=f"policy.{kind}",
        gone_type="policy.deleted",
        client=policy.client,
        data=record("policy", policy),
        was=left,
        last_seen=last_seen,
    )


def policies_producer_clear(*, user, policies: QuerySet[Policy]) -> list[Policy]:
    """The policies among `policies` that name a producer keep none (a producer deleted, or one
    a client's move to another agency leaves behind), each as `policy_update` would leave it:
    a history version and the stamps of `user` (`links_clear`), and a `policy.updated`, the
    policy as it is now, to the agency and client it is in. In bulk: the same statements for
    one policy or a thousand. For a write in progress, in its transaction, after it locked the
    policies' clients (the order every write takes); the policies cleared."""
    named = policies.exclude(producer=None)
    rows_lock(named)
    cleared = list(with_representation(named.order_by("pk"), today()))
    if not cleared:
        return cleared
    links_clear(cleared, "producer", user=user)
    records_updated_emit(kind="policy", objs=cleared)
    return cleared
