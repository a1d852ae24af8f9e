from django.core.management.base import BaseCommand

from apps.masterdata.services import masterdata_load


class Command(BaseCommand):
    help = "Load the master data (states, cities, unit types, makes, coverage types…). Idempotent."

    def handle(self, *args, **options):
        counts = masterdata_load()
        for name, count in counts.items():
            self.stdout.write(f"{name}: {count}")
