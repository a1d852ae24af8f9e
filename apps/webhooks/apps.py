from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "apps.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from apps.core.metrics import scrape_family_register
        from apps.webhooks.metrics import deliveries_family

        scrape_family_register("webhook_deliveries", ["status"], deliveries_family)
