from __future__ import annotations

from rest_framework import serializers

from apps.core.serializers import StrictBooleanField, StrictCharField, StrictIntegerField


class TokenRequestSerializer(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=256, trim_whitespace=False)


class TokenPairSerializer(serializers.Serializer):
    access = StrictCharField()
    refresh = StrictCharField()


class RefreshRequestSerializer(serializers.Serializer):
    refresh = StrictCharField()


class AccessTokenSerializer(serializers.Serializer):
    access = StrictCharField()


class AgencyRefSerializer(serializers.Serializer):
    id = StrictIntegerField()
    name = StrictCharField()


class MeSerializer(serializers.Serializer):
    username = StrictCharField()
    is_superuser = StrictBooleanField()
    agencies = AgencyRefSerializer(many=True)
    permissions = serializers.ListField(child=StrictCharField())
