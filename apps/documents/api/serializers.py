from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.params import ID_BOUNDS
from apps.core.serializers import (
    PersonField,
    ShapedSerializer,
    SingleValuedFormSerializer,
    StrictCharField,
    StrictIntegerField,
    UtcDateTimeField,
)
from apps.documents.storage import download_link


class DocumentSerializer(serializers.Serializer):
    """A document as listed and as answered after an upload or a replacement."""

    id = StrictIntegerField()
    module = StrictCharField()
    client_id = StrictIntegerField()
    policy_id = StrictIntegerField(allow_null=True)
    file_name = StrictCharField()
    content_type = StrictCharField()
    size = StrictIntegerField()
    sha256 = StrictCharField()
    description = StrictCharField()
    uploaded_at = UtcDateTimeField()
    uploaded_by = PersonField()
    download_url = serializers.SerializerMethodField()
    expires_at_utc = serializers.SerializerMethodField()

    def _link(self, document):
        cache = self.context.setdefault("_links", {})
        if document.pk not in cache:
            cache[document.pk] = download_link(
                self.context.get("request"),
                document_id=document.pk,
                storage_name=document.storage_name,
                file_name=document.file_name,
            )
        return cache[document.pk]

    def get_download_url(self, document) -> str:
        return self._link(document)[0]

    def get_expires_at_utc(self, document) -> str:
        return UtcDateTimeField().to_representation(self._link(document)[1])


# A download link's answer; `link` is apps.documents.storage.download_link's (url, expiry).
class DownloadSerializer(ShapedSerializer):
    document_id = StrictIntegerField()
    download_url = StrictCharField()
    expires_at_utc = StrictCharField()

    @staticmethod
    def shape(document, link) -> dict:
        url, expires_at = link
        return {
            "document_id": document.pk,
            "download_url": url,
            "expires_at_utc": UtcDateTimeField().to_representation(expires_at),
        }


class DocumentRecordSerializer(DocumentSerializer):
    """A document as its events show it (`document.uploaded|replaced|deleted`): as listed,
    without the download link (signed for minutes; an event is kept for 30 days and pushed to
    receivers: a link in it would be stale, or a way to the file for whoever sees the event),
    and with whether it is deleted."""

    download_url = None
    expires_at_utc = None
    deleted = serializers.BooleanField(read_only=True)


class UploadSerializer(SingleValuedFormSerializer):
    file = serializers.FileField(allow_empty_file=True, use_url=False)
    description = StrictCharField(required=False, allow_blank=True, max_length=500)


@extend_schema_field({"type": "string", "pattern": "^[1-9][0-9]{0,18}$"})  # 2**63 - 1: 19 digits
class FormIdField(serializers.IntegerField):
    """A record id sent as a multipart form value (always text there): digits only."""

    def __init__(self, **kwargs):
        super().__init__(**{**ID_BOUNDS, **kwargs})

    def to_internal_value(self, data):
        if not isinstance(data, str) or not data.isdigit() or not data.isascii():
            self.fail("invalid")
        return super().to_internal_value(data)


class ClientUploadSerializer(UploadSerializer):
    client_id = FormIdField()


class PolicyUploadSerializer(UploadSerializer):
    policy_id = FormIdField()


class ReplaceSerializer(SingleValuedFormSerializer):
    file = serializers.FileField(allow_empty_file=True, use_url=False)
