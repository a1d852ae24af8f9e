from __future__ import annotations

from rest_framework import serializers

from apps.core.serializers import (
    StrictBooleanField,
    StrictCharField,
    UtcDateTimeField,
    reference_id_field,
)
from apps.events.services import EVENT_TYPES
from apps.webhooks.models import DeliveryStatus, WebhookDelivery


class WebhookSerializer(serializers.Serializer):
    """A subscription as read and written (never its secret)."""

    id = serializers.IntegerField(read_only=True)
    url = serializers.URLField(max_length=2000)
    event_types = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_TYPES),
        required=False,
        max_length=len(EVENT_TYPES),
        help_text="[] means every type.",
    )
    client_ids = serializers.ListField(
        child=reference_id_field(), required=False, max_length=1000, help_text="[] = all."
    )
    profile_id = reference_id_field(required=False, allow_null=True)
    description = StrictCharField(required=False, allow_blank=True, max_length=500)
    active = StrictBooleanField(required=False)
    agency_id = reference_id_field(
        required=False, help_text="Required on create only when you act for several agencies."
    )
    created_at = UtcDateTimeField(read_only=True)

    def validate(self, attrs):
        if self.instance is None and "url" not in attrs:
            raise serializers.ValidationError({"url": ["This field is required."]})
        for key in ("event_types", "client_ids"):
            if key in attrs:
                attrs[key] = list(dict.fromkeys(attrs[key]))
        return attrs


class WebhookWithSecretSerializer(WebhookSerializer):
    """The create and rotate-secret answers: the only ones that carry the secret."""

    secret = serializers.CharField(read_only=True, help_text="whsec_…; shown only here.")


class DeliverySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    event_id = serializers.CharField(source="event.public_id")
    event_type = serializers.CharField(source="event.type")
    attempts = serializers.IntegerField()
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    response_status = serializers.IntegerField(allow_null=True)
    duration_ms = serializers.IntegerField(allow_null=True)
    last_attempt_at = UtcDateTimeField(allow_null=True)
    next_attempt_at = UtcDateTimeField(allow_null=True)

    class Meta:
        model = WebhookDelivery
