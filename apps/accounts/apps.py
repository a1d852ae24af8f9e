from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = "API access"

    def ready(self):
        # Permission sets are cached per user; every change Django makes to one moves its
        # generation, so no node serves a stale set (contract section 13).
        from apps.accounts.principal import connect_signals

        connect_signals()
