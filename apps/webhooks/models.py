"""Webhook subscriptions and their deliveries (contract section 14)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from apps.core.models import AgencyScopedQuerySet, TimeStampedModel


class WebhookQuerySet(AgencyScopedQuerySet):
    agency_field = "agency"


class Webhook(TimeStampedModel):
    """Where an agency wants its events POSTed, signed with its secret(s)."""

    agency = models.ForeignKey("agencies.Agency", on_delete=models.CASCADE, related_name="+")
    url = models.URLField(max_length=2000)
    event_types = models.JSONField(default=list, blank=True, help_text="[] means every type.")
    client_ids = models.JSONField(default=list, blank=True, help_text="[] means every client.")
    profile_id = models.BigIntegerField(null=True, blank=True)
    description = models.CharField(max_length=500, blank=True, default="")
    active = models.BooleanField(default=True)
    secret = models.CharField(max_length=200, editable=False)
    # During a rotation the previous secret signs too, until it expires.
    previous_secret = models.CharField(max_length=200, blank=True, default="", editable=False)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True, editable=False)
    deactivated_reason = models.CharField(max_length=200, blank=True, default="")

    objects = WebhookQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["agency", "active"], name="webhook_agency_active_idx")]

    def __str__(self) -> str:
        return self.url

    def signing_secrets(self) -> list[str]:
        secrets = [self.secret]
        if self.previous_secret and (
            self.previous_secret_expires_at is None
            or self.previous_secret_expires_at > timezone.now()
        ):
            secrets.append(self.previous_secret)
        return secrets


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class WebhookDeliveryQuerySet(AgencyScopedQuerySet):
    agency_field = "webhook__agency"


class WebhookDelivery(models.Model):
    """One event for one subscription: retried until a 2xx, a 410 or the retry window ends."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey("events.Event", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    response_body = models.CharField(max_length=500, blank=True, default="")
    error = models.CharField(max_length=500, blank=True, default="")
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True, default=timezone.now)
    # A worker holds the delivery until then: nobody else sends it meanwhile; a worker killed
    # mid-delivery leaves it pending, and the sweep hands it out again once the lease ends.
    locked_until = models.DateTimeField(null=True, blank=True)

    objects = WebhookDeliveryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(fields=["webhook", "event"], name="delivery_once_per_event")
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due_idx"),
            models.Index(fields=["webhook", "-id"], name="delivery_webhook_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} → {self.webhook_id} ({self.status})"
