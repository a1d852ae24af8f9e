"""Writes of webhook subscriptions and the fan-out of events to them."""

from __future__ import annotations

import base64
import datetime as dt
import math
import secrets as pysecrets
from typing import TypedDict, Unpack
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.agencies.services import agency_kept, authorized_agency
from apps.clients.models import Client
from apps.compliance.models import RequirementProfile
from apps.core.exceptions import Conflict
from apps.core.params import MAX_BIGINT
from apps.core.services import model_update
from apps.events.models import Event
from apps.events.selectors import NOT_IN_FEED
from apps.events.services import EVENT_TYPES, event_emit
from apps.webhooks.delivery import (
    PAUSED,
    RETRY_WINDOW,
    TargetRefused,
    in_flight_for,
    target_check,
)
from apps.webhooks.models import DeliveryStatus, Webhook, WebhookDelivery

# Sent only to the subscriptions that name the profile the verdict is under.
PROFILE_EVENT = "compliance.changed"
# A rotated-out secret keeps signing this long, so receivers can switch without a gap.
ROTATION_OVERLAP = dt.timedelta(hours=24)


class WebhookFields(TypedDict, total=False):
    """What a subscription's owner may set (the secret is the service's)."""

    url: str
    event_types: list[str]
    client_ids: list[int]
    profile_id: int | None
    description: str
    active: bool


WEBHOOK_FIELDS = tuple(WebhookFields.__annotations__)


def secret_new() -> str:
    """`whsec_` and the base64 of 32 random bytes (Standard Webhooks)."""
    return "whsec_" + base64.b64encode(pysecrets.token_bytes(32)).decode()


def _is_client_id(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_BIGINT


def _check_shapes(webhook: Webhook, fields) -> None:
    """The filters are JSON columns: whatever a caller sends (the API's serializer restricts
    it, the admin's JSON box does not), only a list of type names and a list of client ids are
    stored. `null`, `{}`, `"AL"` (read as the types A and L), numbers or ids past the column's
    range are refused on their field, never compared as they are."""
    event_types = webhook.event_types
    if "event_types" in fields and not (
        isinstance(event_types, list) and all(isinstance(name, str) for name in event_types)
    ):
        raise ValidationError(
            {"event_types": "Expected a list of event type names ([] means every type)."}
        )
    client_ids = webhook.client_ids
    if "client_ids" in fields and not (
        isinstance(client_ids, list) and all(_is_client_id(pk) for pk in client_ids)
    ):
        raise ValidationError(
            {
                "client_ids": "Expected a list of client ids, integers from 1 to "
                f"{MAX_BIGINT} ([] means every client)."
            }
        )


def _check(webhook: Webhook, fields=("event_types", "client_ids", "profile_id", "url")) -> None:
    """The subscription's `fields` as they may be written. An update checks only the fields it
    changes: a client that has since left the agency, a profile deleted before profiles in use
    were kept, or a host that no longer resolves must not keep the subscription from being
    paused, renamed or re-activated."""
    _check_shapes(webhook, fields)
    unknown = sorted(set(webhook.event_types) - set(EVENT_TYPES)) if "event_types" in fields else []
    if unknown:
        raise ValidationError({"event_types": f"Unknown event types: {', '.join(unknown)}."})
    pings = sorted(NOT_IN_FEED & set(webhook.event_types)) if "event_types" in fields else []
    if pings:
        # A subscription of pings alone would hear nothing else; a ping needs no filter.
        raise ValidationError(
            {
                "event_types": f"{', '.join(pings)} is no type to subscribe to: a ping "
                "(POST /v1/webhooks/{id}/ping) reaches the subscription whatever its event types."
            }
        )
    if (
        {"event_types", "profile_id"} & set(fields)
        and webhook.profile_id is None
        and PROFILE_EVENT in webhook.event_types
    ):
        # Never delivered without a profile (`_matches`): a subscription that asks for it
        # would wait for it in silence.
        raise ValidationError(
            {
                "profile_id": f"Required when eventTypes names {PROFILE_EVENT}: the "
                "requirement profile whose verdicts it announces."
            }
        )
    if "client_ids" in fields and webhook.client_ids:
        found = set(
            Client.objects.filter(
                pk__in=webhook.client_ids, agency_id=webhook.agency_id
            ).values_list("pk", flat=True)
        )
        missing = sorted(set(webhook.client_ids) - found)
        if missing:
            raise ValidationError({"client_ids": f"No client with id {missing[0]}."})
    if (
        "profile_id" in fields
        and webhook.profile_id is not None
        # Locked, so a deletion of the profile (which refuses one a subscription names) and
        # this subscription's save come one after the other.
        and not RequirementProfile.objects.select_for_update()
        .filter(pk=webhook.profile_id, agency_id=webhook.agency_id)
        .exists()
    ):
        raise ValidationError({"profile_id": "No requirement profile with this id."})
    if "url" in fields:
        # Never sent (the signature is how a receiver authenticates a delivery), and shown
        # back by every read of the subscription.
        if "@" in urlsplit(webhook.url).netloc:
            raise ValidationError({"url": "The URL must not contain credentials (user:password@)."})
        try:
            target_check(webhook.url)
        except TargetRefused as exc:
            raise ValidationError({"url": str(exc)}) from None


@transaction.atomic
def webhook_create(
    *, user, url: str, agency_id: int | None = None, **fields: Unpack[WebhookFields]
) -> Webhook:
    """Subscribe a URL to an agency's events; the secret is shown by the caller once."""
    agency = authorized_agency(user, agency_id, implied=True)
    webhook = Webhook(
        agency=agency, url=url, secret=secret_new(), created_by=user, updated_by=user, **fields
    )
    _check(webhook)
    webhook.full_clean(validate_constraints=False)
    webhook.save()
    return webhook


@transaction.atomic
def webhook_update(
    *, user, instance: Webhook, agency_id: int | None = None, **changes: Unpack[WebhookFields]
) -> Webhook:
    """Partial update; reactivating clears the reason it was deactivated. A subscription
    stays in its agency (`agency_id`, if given, must be its own)."""
    webhook = Webhook.objects.select_for_update().get(pk=instance.pk)
    agency_kept(user, webhook, agency_id, noun="subscription")
    data: dict = {**changes}
    if changes.get("active"):
        data["deactivated_reason"] = ""
        if not webhook.active:
            _pause_outlived(webhook)
    # A field sent as it is stored (a whole subscription sent back) is no change to check.
    changing = {name for name, value in changes.items() if getattr(webhook, name) != value}
    model_update(
        instance=webhook,
        fields=(*WEBHOOK_FIELDS, "deactivated_reason"),
        data=data,
        user=user,
        check=lambda checked: _check(checked, fields=changing),
    )
    return webhook


def _pause_outlived(webhook: Webhook) -> None:
    """Deliveries held by a pause resume when it ends, within their retry window; those the
    pause outlived fail unsent, as they would have after their last retry. One whose attempt
    is under way (claimed before the pause, its hold not lapsed) is left to that attempt: its
    answer decides (delivered, or failed: the window has passed). One whose attempt outlived
    its hold fails, and that attempt's late answer is not recorded (`_claimed`)."""
    now = timezone.now()
    WebhookDelivery.objects.filter(
        webhook=webhook,
        status=DeliveryStatus.PENDING,
        created_at__lt=now - RETRY_WINDOW,
    ).exclude(locked_until__gt=now).update(
        status=DeliveryStatus.FAILED,
        error="The retry window ended while the subscription was paused.",
        next_attempt_at=None,
        locked_until=None,
    )


def _not_paused(webhook_id: int) -> None:
    """Nothing is sent to a paused subscription: sending on demand (a redelivery, a ping)
    would be accepted and then never sent."""
    if not Webhook.objects.select_for_update().filter(pk=webhook_id, active=True).exists():
        raise Conflict(f"{PAUSED} Re-activate it (active: true) to send to it.")


@transaction.atomic
def webhook_delete(*, user, instance: Webhook) -> None:
    """Unsubscribe; its delivery log goes with it."""
    Webhook.objects.filter(pk=instance.pk).delete()


@transaction.atomic
def webhook_rotate_secret(*, user, instance: Webhook) -> Webhook:
    """A new secret; the old one keeps signing beside it for ROTATION_OVERLAP."""
    webhook = Webhook.objects.select_for_update().get(pk=instance.pk)
    webhook.previous_secret = webhook.secret
    webhook.previous_secret_expires_at = timezone.now() + ROTATION_OVERLAP
    webhook.secret = secret_new()
    webhook.updated_by = user
    webhook.save()
    return webhook


def _matches(webhook: Webhook, event: Event) -> bool:
    if webhook.event_types and event.type not in webhook.event_types:
        return False
    if webhook.client_ids and event.client_id not in webhook.client_ids:
        return False
    if event.type == PROFILE_EVENT:
        # A verdict is a profile's: only its subscribers get it (contract 14 and 15).
        return webhook.profile_id is not None and event.data.get("profileId") in (
            None,
            webhook.profile_id,
        )
    return True


def deliveries_fan_out(*, event: Event) -> list[WebhookDelivery]:
    """One pending delivery per matching active subscription, in the event's transaction (one
    query when the agency has none); the worker's delivery loop claims it once it commits."""
    if event.type == "webhook.ping":
        return []
    hooks = [
        h
        for h in Webhook.objects.filter(agency_id=event.agency_id, active=True)
        if _matches(h, event)
    ]
    if not hooks:
        return []
    now = timezone.now()
    return WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(webhook=h, event=event, next_attempt_at=now, locked_until=None)
            for h in hooks
        ]
    )


def deliveries_fan_out_many(*, events: list[Event]) -> list[WebhookDelivery]:
    """`deliveries_fan_out` for many events: one subscription query, one insert."""
    agencies = {e.agency_id for e in events}
    if not agencies:
        return []
    hooks = list(Webhook.objects.filter(agency_id__in=agencies, active=True))
    if not hooks:
        return []
    now = timezone.now()
    return WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(webhook=h, event=e, next_attempt_at=now)
            for e in events
            if e.type != "webhook.ping"
            for h in hooks
            if h.agency_id == e.agency_id and _matches(h, e)
        ],
        batch_size=1000,
    )


class BeingSent(Conflict):
    """A redelivery asked while an attempt of the delivery is under way: 409 with
    Retry-After, at most an attempt's timeout."""

    default_detail = (
        "The delivery is being sent now; redeliver it when this attempt ends "
        "(its answer is in the delivery log)."
    )
    default_code = "being_sent"

    def __init__(self, *, wait: int):
        super().__init__()
        self.wait = wait  # Retry-After


@transaction.atomic
def delivery_redeliver(*, user, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a delivery again now, whatever its state (a receiver deduplicates on the id);
    not to a paused subscription, nor while an attempt of it is under way (409, with how long
    that attempt may still take): it would be sent twice at once, and that attempt's answer
    would overwrite the request. An attempt that outlived its hold has its hold taken: its
    late answer is not recorded (`delivery._claimed`), so it cannot erase the request."""
    _not_paused(delivery.webhook_id)
    now = timezone.now()
    # One conditional update: a claim taking the row at the same moment either comes first
    # (this matches nothing: 409) or finds the row requested again.
    queued = (
        WebhookDelivery.objects.filter(pk=delivery.pk)
        .exclude(locked_until__gt=now)
        .update(status=DeliveryStatus.PENDING, next_attempt_at=now, locked_until=None)
    )
    delivery.refresh_from_db()
    if not queued:
        wait = in_flight_for(delivery.locked_until) or 1
        raise BeingSent(wait=math.ceil(wait))
    return delivery


@transaction.atomic
def webhook_ping(*, user, webhook: Webhook) -> WebhookDelivery:
    """A `webhook.ping` event delivered to this subscription only; not to a paused one
    (409)."""
    _not_paused(webhook.pk)
    event = event_emit(
        type="webhook.ping",
        agency_id=webhook.agency_id,
        client_id=None,
        data={"webhook_id": webhook.pk},
    )
    return WebhookDelivery.objects.create(
        webhook=webhook, event=event, next_attempt_at=timezone.now()
    )
