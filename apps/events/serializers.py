"""An event as the feed and webhooks carry it: one shape for both, so they cannot differ."""

from __future__ import annotations

import datetime as dt

from rest_framework import serializers

from apps.core.serializers import ShapedSerializer
from apps.events.models import Event


class EventSerializer(ShapedSerializer):
    """An event as the feed and webhooks carry it."""

    id = serializers.CharField(help_text="evt_…; unique; the webhook-id of its deliveries.")
    type = serializers.CharField(help_text="One of the types of contract section 14.")
    occurred_at = serializers.DateTimeField()
    agency_id = serializers.IntegerField()
    client_id = serializers.IntegerField(allow_null=True)
    data = serializers.DictField()

    @staticmethod
    def shape(event: Event) -> dict:
        # Keys already in camelCase: a webhook's body is this dict as JSON, with no renderer
        # in between; `data` was camelized when the event was written.
        return {
            "id": event.public_id,
            "type": event.type,
            "occurredAt": event.occurred_at.astimezone(dt.UTC).isoformat().replace("+00:00", "Z"),
            "agencyId": event.agency_id,
            "clientId": event.client_id,
            "data": event.data,
        }


class EventFeedSerializer(ShapedSerializer):
    results = EventSerializer(many=True)
    next = serializers.CharField(allow_null=True)

    @staticmethod
    def shape(page: tuple[list[Event], str | None]) -> dict:
        events, next_cursor = page
        return {"results": [EventSerializer.shape(e) for e in events], "next": next_cursor}
