from django.apps import AppConfig


class ClientsConfig(AppConfig):
    name = "apps.clients"
    label = "clients"
    verbose_name = "Clients"

    def ready(self):
        # Events show a client as the API does (apps.events.records).
        from apps.clients.api.serializers import ClientSerializer
        from apps.events.records import record_serializer_register

        record_serializer_register("client", ClientSerializer)
