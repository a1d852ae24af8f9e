"""Writes of policies: every business rule of a policy lives here."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.agencies.models import Producer
from apps.clients.models import Client
from apps.core.exceptions import Conflict
from apps.events.records import policy_record
from apps.events.services import event_emit, status_watch
from apps.policies.models import Policy, PolicyLimit, PolicyRate

POLICY_FIELDS = (
    "policy_number",
    "coverage_type",
    "insurer",
    "state",
    "effective_date",
    "expiration_date",
    "cancellation_date",
    "premium",
    "additional_insured",
    "subrogation_waived",
    "covered_autos",
    "description",
)


def visible_client(user, client_id: int, *, field: str = "client_id") -> Client:
    """A live client the user may see, or a 400 naming the field (never a hint it exists)."""
    client = Client.objects.for_user(user).live().filter(pk=client_id).first()
    if client is None:
        raise ValidationError({field: "No client with this id."})
    return client


def _producer(policy: Policy, data: dict[str, Any]) -> Producer | None:
    if data.get("producer_id") is not None:
        producer = Producer.objects.filter(
            pk=data["producer_id"], agency_id=policy.client.agency_id
        ).first()
        if producer is None:
            raise ValidationError({"producer_id": "No producer with this id in the agency."})
        return producer
    name = data.get("producer_name")
    if name:
        producer = Producer.objects.filter(
            agency_id=policy.client.agency_id, name__iexact=name.strip()
        ).first()
        if producer is None:
            raise ValidationError({"producer_name": f"Unknown producer: '{name}'."})
        return producer
    return None


def _check_dates(policy: Policy) -> None:
    if policy.expiration_date <= policy.effective_date:
        raise ValidationError({"expiration_date": "Must be after the effective date."})
    if policy.cancellation_date and policy.cancellation_date < policy.effective_date:
        raise ValidationError({"cancellation_date": "Cannot precede the effective date."})


def _check_number_free(policy: Policy) -> None:
    if not policy.policy_number or policy.deleted:
        return
    taken = (
        Policy.objects.live()
        .filter(
            agency_id=policy.client.agency_id,
            insurer_id=policy.insurer_id,
            policy_number=policy.policy_number,
        )
        .exclude(pk=policy.pk)
        .exists()
    )
    if taken:
        raise Conflict(
            f"A live policy numbered {policy.policy_number} exists for this insurer in this agency."
        )


def _replace_limits(policy: Policy, limits: list[dict[str, Any]]) -> None:
    names = [limit["name"] for limit in limits]
    if len(names) != len(set(names)):
        raise ValidationError({"limits": "Each limit may appear once."})
    policy.limits.all().delete()
    PolicyLimit.objects.bulk_create(
        PolicyLimit(policy=policy, name=limit["name"], amount=limit["amount"], position=n)
        for n, limit in enumerate(limits)
    )


RATE_FIELDS = ("annual_rate", "rate_per_100_value", "minimum_premium")


def _replace_rates(policy: Policy, rates: list[dict[str, Any]]) -> None:
    """The policy's rating, one row per unit type, every amount zero or more."""
    unit_types = [rate["unit_type"].pk for rate in rates]
    if len(unit_types) != len(set(unit_types)):
        raise ValidationError({"rates": "Each unit type may be rated once."})
    for rate in rates:
        if any((rate.get(field) or 0) < 0 for field in RATE_FIELDS):
            raise ValidationError({"rates": "Rates and minimum premiums cannot be negative."})
    policy.rates.all().delete()
    PolicyRate.objects.bulk_create(
        PolicyRate(
            policy=policy,
            unit_type=rate["unit_type"],
            **{field: rate.get(field) or 0 for field in RATE_FIELDS},
        )
        for rate in rates
    )


@transaction.atomic
def policy_create(*, user, data: dict[str, Any]) -> Policy:
    """Create a policy for a client the user may see."""
    client = visible_client(user, data["client_id"])
    policy = Policy(client=client, created_by=user, updated_by=user)
    for field in POLICY_FIELDS:
        if field in data:
            setattr(policy, field, data[field])
    policy.producer = _producer(policy, data) or client.producer
    policy.deleted = bool(data.get("deleted", False))
    policy.deleted_at = timezone.now() if policy.deleted else None
    _check_dates(policy)
    _check_number_free(policy)
    policy.full_clean(validate_constraints=False)
    with status_watch(client_ids=[client.pk]):
        policy.save()
        _replace_limits(policy, data.get("limits") or [])
        _replace_rates(policy, data.get("rates") or [])
    event_emit(
        type="policy.created",
        agency_id=client.agency_id,
        client_id=client.pk,
        data=policy_record(policy),
    )
    return policy


@transaction.atomic
def policy_update(*, user, instance: Policy, data: dict[str, Any]) -> Policy:
    """Partial update; `deleted` soft-deletes or restores, `cancellationDate` cancels."""
    policy = Policy.objects.select_for_update().select_related("client").get(pk=instance.pk)
    was = (policy.client_id, policy.deleted, policy.cancellation_date)
    if "client_id" in data and data["client_id"] != policy.client_id:
        policy.client = visible_client(user, data["client_id"])
    for field in POLICY_FIELDS:
        if field in data:
            setattr(policy, field, data[field])
    if "producer_id" in data or "producer_name" in data:
        policy.producer = _producer(policy, data)
    if "deleted" in data and data["deleted"] != policy.deleted:
        policy.deleted = data["deleted"]
        policy.deleted_at = timezone.now() if policy.deleted else None
    _check_dates(policy)
    _check_number_free(policy)
    policy.updated_by = user
    policy.full_clean(validate_constraints=False)
    units = policy.vehicle_coverages.values_list("vehicle_id", flat=True)
    with status_watch(client_ids=[was[0], policy.client_id], vehicle_ids=list(units)):
        policy.save()
        if "limits" in data:
            _replace_limits(policy, data["limits"] or [])
        if "rates" in data:
            _replace_rates(policy, data["rates"] or [])
    kind = "updated"
    if policy.deleted != was[1]:
        kind = "deleted" if policy.deleted else "restored"
    elif policy.cancellation_date is not None and policy.cancellation_date != was[2]:
        kind = "cancelled"
    event_emit(
        type=f"policy.{kind}",
        agency_id=policy.client.agency_id,
        client_id=policy.client_id,
        data=policy_record(policy),
    )
    return policy
