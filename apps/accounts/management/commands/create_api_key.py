from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from apps.accounts.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key; its value is printed once and only its hash is stored."

    def add_arguments(self, parser):
        parser.add_argument("name", help="Who or what the key is for (at most 120 characters).")

    def handle(self, *args, name: str, **options):
        try:
            _key, raw = api_key_create(name=name)
        except ValidationError as exc:  # a name the key cannot take: said, not a traceback
            problems = exc.message_dict.items() if hasattr(exc, "error_dict") else []
            problems = problems or [("name", exc.messages)]
            message = "; ".join(f"{field}: {' '.join(m)}" for field, m in problems)
            raise CommandError(message) from exc
        self.stdout.write(raw)
