from django.apps import AppConfig


class CoveragesConfig(AppConfig):
    name = "apps.coverages"
    label = "coverages"
    verbose_name = "Coverages"
