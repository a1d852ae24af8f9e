from django.apps import AppConfig


class VehiclesConfig(AppConfig):
    name = "apps.vehicles"
    label = "vehicles"
    verbose_name = "Vehicles"

    def ready(self):
        # Events show a vehicle as the API does (apps.events.records).
        from apps.events.records import record_serializer_register
        from apps.vehicles.api.serializers import VehicleSerializer

        record_serializer_register("vehicle", VehicleSerializer)
