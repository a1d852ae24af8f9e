from django.db.models.signals import post_save

from apps.events import records


def _make_saved(sender, instance, created=False, raw=False, **kwargs):
    if not raw and not created:  # a new make has no vehicles yet
        from apps.vehicles.models import MAKE_NAME, Vehicle

        MAKE_NAME.spread(Vehicle, instance)


class VehiclesConfig(records.RecordsAppConfig):
    name = "apps.vehicles"
    label = "vehicles"
    verbose_name = "Vehicles"
    # Events show a vehicle as the API does.
    record_serializers = {"vehicle": "apps.vehicles.api.serializers.VehicleSerializer"}
    # The rows of other lists its record shows by name: a change of them announces
    # `vehicle.updated` for each live vehicle naming the row (docs/webhooks.md).
    shows = {
        "vehicle": (
            "apps.vehicles.selectors.live_vehicles_naming",
            {
                "masterdata.Make": (("name",), ("make",)),
                "masterdata.UnitType": (("name", "is_power_unit"), ("unit_type",)),
                "masterdata.State": (("name", "code"), ("license_plate_state",)),
                "vehicles.Lienholder": (("name",), ("lienholder",)),
            },
        )
    }

    def ready(self):
        super().ready()
        # A renamed make, whoever renames it (the masterdata service behind the API and the
        # admin, a shell): its vehicles' copies of its name follow (`MAKE_NAME`), in the same
        # transaction. Makes sit below this app, so they cannot call it.
        post_save.connect(_make_saved, sender="masterdata.Make", dispatch_uid="vehicles-make-name")
