from apps.events import records


class DocumentsConfig(records.RecordsAppConfig):
    name = "apps.documents"
    label = "documents"
    verbose_name = "Documents"
    # Events show a document as the API lists it (without its download link).
    record_serializers = {
        "document": "apps.documents.api.serializers.DocumentRecordSerializer",
    }
