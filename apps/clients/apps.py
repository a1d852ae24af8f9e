from apps.events import records


class ClientsConfig(records.RecordsAppConfig):
    name = "apps.clients"
    label = "clients"
    verbose_name = "Clients"
    # Events show a client as the API does.
    record_serializers = {"client": "apps.clients.api.serializers.ClientSerializer"}
