from apps.events import records


class ClientsConfig(records.RecordsAppConfig):
    name = "apps.clients"
    label = "clients"
    verbose_name = "Clients"
    # Events show a client as the API does.
    record_serializers = {"client": "apps.clients.api.serializers.ClientSerializer"}
    # The rows of other lists its record shows by name: a change of them announces
    # `client.updated` for each live client naming the row (docs/webhooks.md).
    shows = {
        "client": (
            "apps.clients.selectors.live_clients_naming",
            {
                "agencies.Agency": (("name",), ("agency",)),
                "agencies.Producer": (("name",), ("producer",)),
                "masterdata.ClientType": (("name",), ("client_type",)),
                "masterdata.State": (("name", "code"), ("state", "mailing_state")),
                "masterdata.City": (("name",), ("city", "mailing_city")),
            },
        )
    }

    def ready(self):
        super().ready()
        # A producer's deletion (apps.agencies, below this app) clears it from the clients and
        # policies that name it through their services first.
        from apps.agencies.services import producer_release_register
        from apps.clients.services import producer_release

        producer_release_register("clients", producer_release)
