from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "apps.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from apps.core.metrics import scrape_family_register
        from apps.events.services import fan_out_register
        from apps.events.worker import housekeeping_register, loop_register
        from apps.webhooks import checks  # noqa: F401 (registers itself)
        from apps.webhooks.delivery import deliveries_sweep
        from apps.webhooks.metrics import deliveries_family
        from apps.webhooks.relay import Relay
        from apps.webhooks.services import deliveries_fan_out, deliveries_fan_out_many

        # Every recorded event reaches the matching subscriptions.
        fan_out_register(one=deliveries_fan_out, many=deliveries_fan_out_many)
        # Each beat of the worker sends again what a killed worker left overdue.
        housekeeping_register(deliveries_sweep)
        # The worker sends due deliveries from its relay loop.
        loop_register(Relay)
        scrape_family_register("webhook_deliveries", ["status"], deliveries_family)
