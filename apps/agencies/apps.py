from django.apps import AppConfig


class AgenciesConfig(AppConfig):
    name = "apps.agencies"
    label = "agencies"
    verbose_name = "Agencies"
