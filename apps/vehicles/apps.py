from apps.events import records


class VehiclesConfig(records.RecordsAppConfig):
    name = "apps.vehicles"
    label = "vehicles"
    verbose_name = "Vehicles"
    # Events show a vehicle as the API does.
    record_serializers = {"vehicle": "apps.vehicles.api.serializers.VehicleSerializer"}
