from django.apps import AppConfig


class DriversConfig(AppConfig):
    name = "apps.drivers"
    label = "drivers"
    verbose_name = "Drivers"
