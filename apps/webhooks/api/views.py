"""/v1/webhooks: subscriptions, their secret, delivery log, redeliver and ping."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.generics import get_object_or_404
from rest_framework.response import Response
from rest_framework.reverse import reverse

from apps.core.converters import ID_SEGMENT
from apps.core.pagination import PagePagination
from apps.core.permissions import ModelPermissions, offers_method
from apps.core.sorting import SortFilter
from apps.core.viewsets import ScopedViewSet
from apps.events.permissions import FEED_PERMISSIONS
from apps.webhooks.api.serializers import (
    DeliverySerializer,
    WebhookSerializer,
    WebhookWithSecretSerializer,
)
from apps.webhooks.selectors import delivery_queryset, webhook_queryset
from apps.webhooks.services import (
    delivery_redeliver,
    webhook_create,
    webhook_delete,
    webhook_ping,
    webhook_rotate_secret,
    webhook_update,
)


class WebhookPermissions(ModelPermissions):
    """CRUD by method; the log is a read, rotate/ping/redeliver are changes. Every operation also
    needs the change feed's permission (apps.events.permissions): a subscription receives the
    feed's events."""

    action_perms = {
        "deliveries": "webhooks.view_webhook",
        "rotate_secret": "webhooks.change_webhook",
        "ping": "webhooks.change_webhook",
        "redeliver": "webhooks.change_webhook",
    }

    def has_permission(self, request, view):
        perm = self.action_perms.get(getattr(view, "action", None))
        if perm is None:
            allowed = super().has_permission(request, view)
        else:
            allowed = bool(
                request.user and request.user.is_authenticated and request.user.has_perm(perm)
            )
        if not allowed or request.method == "OPTIONS" or not offers_method(request, view):
            return allowed  # a method the route does not offer: DRF's 405
        return request.user.has_perms(FEED_PERMISSIONS)


# The delivery log's sorts (contract section 7), beside `id` and `createdAt`; a delivery
# changes when it is attempted, so `updatedAt` is its last attempt.
DELIVERY_SORT_FIELDS = {
    "updatedAt": "last_attempt_at",
    "status": "status",
    "attempts": "attempts",
    "eventType": "event__type",
    "responseStatus": "response_status",
    "lastAttemptAt": "last_attempt_at",
    "nextAttemptAt": "next_attempt_at",
}


@extend_schema_view(
    create=extend_schema(responses={201: WebhookWithSecretSerializer}),
)
class WebhookViewSet(mixins.DestroyModelMixin, ScopedViewSet):
    """Webhook subscriptions of the caller's agencies (contract section 14)."""

    selector = staticmethod(webhook_queryset)
    serializer_class = WebhookSerializer
    create_service = staticmethod(webhook_create)
    update_service = staticmethod(webhook_update)
    permission_classes = [WebhookPermissions]
    http_method_names = ["get", "post", "put", "delete", "head", "options"]
    default_sort = ("id",)
    sort_fields = {"id": "id", "url": "url", "createdAt": "created_at"}

    def create(self, request, *args, **kwargs):
        serializer = self.get_input_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            webhook = webhook_create(user=request.user, **serializer.validated_data)
        location = reverse("webhook-detail", kwargs={"pk": webhook.pk}, request=request)
        body = WebhookWithSecretSerializer(webhook).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": location})

    def destroy(self, request, *args, **kwargs):
        webhook = self.get_object()
        webhook_delete(user=request.user, instance=webhook)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses={200: WebhookWithSecretSerializer})
    @action(detail=True, methods=["post"], url_path="rotate-secret", takes_body=False)
    def rotate_secret(self, request, pk=None):
        """A new secret; the previous one keeps signing beside it for 24 hours."""
        webhook = webhook_rotate_secret(user=request.user, instance=self.get_object())
        return Response(WebhookWithSecretSerializer(webhook).data)

    @extend_schema(responses={202: DeliverySerializer})
    @action(detail=True, methods=["post"], takes_body=False)
    def ping(self, request, pk=None):
        """Send a `webhook.ping` event to this subscription (queued: 202)."""
        delivery = webhook_ping(user=request.user, webhook=self.get_object())
        return Response(DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={200: DeliverySerializer(many=True)})
    @action(detail=True, methods=["get"], sort_fields=DELIVERY_SORT_FIELDS, default_sort=("-id",))
    def deliveries(self, request, pk=None):
        """The subscription's delivery log, newest first (paged, sortable)."""
        webhook = self.get_object()
        paginator = PagePagination()
        log = delivery_queryset(user=request.user, webhook=webhook)
        rows = paginator.paginate_queryset(
            SortFilter().filter_queryset(request, log, self), request, view=self
        )
        return paginator.get_paginated_response(DeliverySerializer(rows, many=True).data)

    @extend_schema(responses={202: DeliverySerializer})
    @action(
        detail=True,
        methods=["post"],
        url_path=rf"deliveries/(?P<delivery_id>{ID_SEGMENT})/redeliver",
        takes_body=False,
    )
    def redeliver(self, request, pk=None, delivery_id=None):
        """Send a delivery again now (queued: 202)."""
        webhook = self.get_object()
        delivery = get_object_or_404(
            delivery_queryset(user=request.user, webhook=webhook), pk=delivery_id
        )
        delivery = delivery_redeliver(user=request.user, delivery=delivery)
        return Response(DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)
