"""GET /v1/events: the change feed."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.pagination import parse_positive_int
from apps.core.permissions import HasPermissions
from apps.events.selectors import BadCursor, cursor_decode, cursor_encode, event_feed
from apps.events.serializers import EventFeedSerializer
from apps.events.services import EVENT_TYPES


class EventFeedView(APIView):
    """The caller's agencies' change events, oldest first, by cursor."""

    permission_classes = [HasPermissions]
    required_permissions = ("clients.view_client",)
    repeatable_query_params = ("type",)

    @extend_schema(
        parameters=[
            OpenApiParameter("after", OpenApiTypes.STR, description="`next` of the last page."),
            OpenApiParameter("limit", OpenApiTypes.INT, description="1 to 500, default 100."),
            OpenApiParameter(
                "type", OpenApiTypes.STR, many=True, description="An event type; repeatable."
            ),
            OpenApiParameter("clientId", OpenApiTypes.INT),
        ],
        responses=EventFeedSerializer,
        operation_id="events_feed",
    )
    def get(self, request):
        params = request.query_params
        limit = parse_positive_int(params.get("limit"), field="limit", default=100, maximum=500)
        after_raw = params.get("after") or None
        try:
            after = cursor_decode(after_raw) if after_raw else None
        except BadCursor as exc:
            raise ValidationError({"after": [str(exc)]}) from None
        types = [t for t in params.getlist("type") if t]
        unknown = sorted(set(types) - set(EVENT_TYPES))
        if unknown:
            raise ValidationError({"type": [f"Unknown event type: {unknown[0]}."]})
        client_id = None
        if params.get("clientId") not in (None, ""):
            client_id = parse_positive_int(
                params["clientId"], field="clientId", default=0, maximum=2**63 - 1
            )
        events = event_feed(
            user=request.user, after=after, limit=limit, types=types, client_id=client_id
        )
        next_cursor = cursor_encode(events[-1]) if events else after_raw
        return Response(EventFeedSerializer((events, next_cursor)).data)
