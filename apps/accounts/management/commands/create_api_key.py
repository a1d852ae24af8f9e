from django.core.management.base import BaseCommand

from apps.accounts.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key; its value is printed once and only its hash is stored."

    def add_arguments(self, parser):
        parser.add_argument("name", help="Who or what the key is for.")

    def handle(self, *args, name: str, **options):
        _key, raw = api_key_create(name=name)
        self.stdout.write(raw)
