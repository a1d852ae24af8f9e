"""GET /v1/events: the change feed."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.params import PositiveIntParam, QueryParam, QueryParameters
from apps.core.permissions import HasPermissions
from apps.events.permissions import FEED_PERMISSIONS
from apps.events.selectors import (
    NOT_IN_FEED,
    BadCursor,
    Cursor,
    cursor_decode,
    cursor_encode,
    event_feed,
)
from apps.events.serializers import EventFeedSerializer
from apps.events.services import EVENT_TYPES


class CursorParam(QueryParam):
    """A cursor this feed gave out (`next`)."""

    def to_internal_value(self, data) -> Cursor:
        try:
            return cursor_decode(data)
        except BadCursor as exc:
            raise ValidationError(str(exc)) from None


class EventTypesParam(serializers.ListField):
    """Event types of the feed, the parameter repeated (one sent to a subscription only, as a
    `webhook.ping`, is no type of the feed's). Every value is read and empty ones are skipped,
    so `?type=a&type=` is `a` (the feed always read them so)."""

    any_value_sends = True

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> list[str]:
        types = [value for value in data if value]
        unknown = sorted(set(types) - (set(EVENT_TYPES) - NOT_IN_FEED))
        if unknown:
            raise ValidationError(f"Unknown event type: {unknown[0]}.")
        return types


class EventFeedParams(QueryParameters):
    limit = PositiveIntParam(
        maximum=500, default=100, schema_type=int, help_text="1 to 500, default 100."
    )
    after = CursorParam(help_text="`next` of the last page.")
    type = EventTypesParam(default=list, help_text="An event type; repeatable.")
    client_id = PositiveIntParam(schema_type=int)


class EventFeedView(APIView):
    """The caller's agencies' change events, oldest first, by cursor."""

    permission_classes = [HasPermissions]
    required_permissions = FEED_PERMISSIONS
    params_class = EventFeedParams

    @extend_schema(responses=EventFeedSerializer, operation_id="events_feed")
    def get(self, request):
        query = self.params_class.parse(request)
        after = query.get("after")
        try:
            events = event_feed(
                user=request.user,
                after=after,
                limit=query["limit"],
                types=query["type"],
                client_id=query.get("client_id"),
            )
        except BadCursor as exc:  # well formed, but past the feed's head
            raise ValidationError({"after": [str(exc)]}) from None
        next_cursor = cursor_encode(events[-1]) if events else (after.text if after else None)
        return Response(EventFeedSerializer((events, next_cursor)).data)
