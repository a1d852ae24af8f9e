from django.apps import AppConfig


class CoveragesConfig(AppConfig):
    name = "apps.coverages"
    label = "coverages"
    verbose_name = "Coverages"

    def ready(self):
        from apps.coverages.api.serializers import (
            DriverAssignmentSerializer,
            VehicleAssignmentSerializer,
        )
        from apps.coverages.calendar import calendar_run
        from apps.events.records import record_serializer_register
        from apps.events.worker import daily_register

        # Events show a vehicle's or driver's assignment as the API does (apps.events.records).
        record_serializer_register("vehicle_assignment", VehicleAssignmentSerializer)
        record_serializer_register("driver_assignment", DriverAssignmentSerializer)

        # The worker runs the calendar job once per service day.
        daily_register(calendar_run)
