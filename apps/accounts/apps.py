from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = "API access"

    def ready(self) -> None:
        from apps.accounts import checks, signals  # noqa: F401 (checks registers itself)

        signals.connect()
