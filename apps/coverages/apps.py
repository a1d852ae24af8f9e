from apps.events import records


class CoveragesConfig(records.RecordsAppConfig):
    name = "apps.coverages"
    label = "coverages"
    verbose_name = "Coverages"
    # Events show a vehicle's or driver's coverage as the API does.
    record_serializers = {
        "vehicle_coverage": "apps.coverages.api.serializers.VehicleAssignmentSerializer",
        "driver_coverage": "apps.coverages.api.serializers.DriverAssignmentSerializer",
    }

    def ready(self):
        from apps.coverages.calendar import calendar_catch_up
        from apps.events.worker import daily_register

        super().ready()
        # The worker runs the calendar job once per service day, and catches up the days on
        # which no worker ran.
        daily_register(calendar_catch_up)
