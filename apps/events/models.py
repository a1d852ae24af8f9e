"""Change events (contract section 14): a transactional outbox read by the feed and webhooks."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from apps.core.models import AgencyScopedQuerySet


class CurrentTransactionId(models.Func):
    """`txid_current()` on PostgreSQL, 0 elsewhere: the default of the column events were
    ordered by before positions (migration 0001 names it, and 0004 re-creates the column when
    it is reversed; no model uses it)."""

    function = "txid_current"
    template = "%(function)s()"
    output_field = models.BigIntegerField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return "0", []


class PendingPosition(models.Func):
    """A new event's position until its transaction commits: none (NULL) on PostgreSQL, where
    the commit gives it one (apps.events.positions); 0 on SQLite, whose writers are serialised,
    so that the id order is the commit order."""

    template = "NULL"
    output_field = models.BigIntegerField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return "0", []


class EventQuerySet(AgencyScopedQuerySet):
    agency_field = "agency"


class Event(models.Model):
    """One change that can alter what verification answers, written with the change."""

    type = models.CharField(max_length=64)
    agency = models.ForeignKey("agencies.Agency", on_delete=models.CASCADE, related_name="+")
    # Not a foreign key: an event outlives the record it tells about.
    client_id = models.BigIntegerField(null=True, blank=True)
    data = models.JSONField(default=dict)
    occurred_at = models.DateTimeField(default=timezone.now)
    # The feed's order: its transaction's place in the commit order (apps.events.positions).
    position = models.BigIntegerField(null=True, db_default=PendingPosition(), editable=False)

    objects = EventQuerySet.as_manager()

    class Meta:
        ordering = ["position", "id"]
        indexes = [
            models.Index(fields=["agency", "position", "id"], name="event_feed_idx"),
            # The few events without a position: of transactions not committed yet, and any
            # committed around `event_emit`, which the worker positions (`strays_position`).
            models.Index(
                fields=["id"], condition=models.Q(position__isnull=True), name="event_pending_idx"
            ),
            models.Index(fields=["occurred_at"], name="event_occurred_idx"),
            models.Index(fields=["type"], name="event_type_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} {self.type}"

    @property
    def public_id(self) -> str:
        return f"evt_{self.pk}"


class CalendarMark(models.Model):
    """A calendar event already emitted: never twice for the same policy, type and day (the
    30- and 7-day `policy.expiring` notices are the types `policy.expiring:30` and `:7`)."""

    # The mark of a day whose job has run (claimed by the run, read by the catch-up).
    DAY_RUN = {"policy_id": 0, "type": "calendar.day"}

    policy_id = models.BigIntegerField()
    type = models.CharField(max_length=64)
    day = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["policy_id", "type", "day"], name="calendar_mark_once")
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.policy_id} {self.day}"


class WorkerHeartbeat(models.Model):
    """The last time each worker process was alive (read by /readyz)."""

    worker_id = models.CharField(max_length=64, unique=True)
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.worker_id
