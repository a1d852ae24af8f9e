from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "apps.events"
    label = "events"
    verbose_name = "Change events"

    def ready(self):
        from apps.core.views import readiness_check_register
        from apps.events.worker import worker_check

        readiness_check_register("worker", worker_check)
