"""Serializer building blocks shared by every app."""

from __future__ import annotations

import datetime as dt

from rest_framework import serializers


class UtcDateTimeField(serializers.DateTimeField):
    """Timestamps are always rendered in UTC with a trailing Z."""

    def __init__(self, **kwargs):
        kwargs.setdefault("default_timezone", dt.UTC)
        super().__init__(**kwargs)

    def to_representation(self, value):
        if value is None:
            return None
        return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class MoneyField(serializers.DecimalField):
    """Money: a decimal string with two places."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_digits", 14)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("coerce_to_string", True)
        super().__init__(**kwargs)


class AuditedModelSerializer(serializers.ModelSerializer):
    """ModelSerializer whose timestamps are UTC and whose audit fields are read-only."""

    created_at = UtcDateTimeField(read_only=True)
    updated_at = UtcDateTimeField(read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    updated_by = serializers.SlugRelatedField(slug_field="username", read_only=True)


def reference_id_field(**kwargs) -> serializers.IntegerField:
    """An integer reference to another record (`clientId`, `parentClientId`…)."""
    kwargs.setdefault("min_value", 1)
    kwargs.setdefault("max_value", 2**63 - 1)
    return serializers.IntegerField(**kwargs)
