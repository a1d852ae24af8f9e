from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"
    verbose_name = "Core"

    def ready(self):
        import apps.core.lookups  # noqa: F401  (registers `__in_list`)
        from apps.core.counting import connect_signals

        connect_signals()
