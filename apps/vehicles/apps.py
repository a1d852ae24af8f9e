from django.apps import AppConfig


class VehiclesConfig(AppConfig):
    name = "apps.vehicles"
    label = "vehicles"
    verbose_name = "Vehicles"
