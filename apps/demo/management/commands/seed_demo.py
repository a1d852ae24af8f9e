from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.demo.reset import demo_reset
from apps.demo.seed import DEMO_API_KEY, DEMO_PASSWORD, seed_demo


class Command(BaseCommand):
    help = (
        "Create the demo world (idempotent) and print its credentials; --reset first empties "
        "everything but the master data, so docs/api.md replays from its documented state."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--force", action="store_true", help="Seed even when DJANGO_DEBUG is off."
        )
        parser.add_argument(
            "--reset",
            action="store_true",
            help="Empty every table but the master data (ids back to 1), then seed.",
        )

    def handle(self, *args, **options):
        if not settings.DEBUG and not options["force"]:
            raise CommandError("Refusing to seed demo data with DJANGO_DEBUG off; use --force.")
        if options["reset"]:
            demo_reset()
            self.stdout.write("Demo data emptied (master data kept).")
        world = seed_demo()
        if world.found:
            self.stdout.write(
                self.style.SUCCESS(
                    "Demo world found: left as it is (make demo-reset brings the documented "
                    "one back)."
                )
            )
        else:
            self.stdout.write(self.style.SUCCESS("Demo world ready."))
        self.stdout.write(f"  API key:   {DEMO_API_KEY}")
        self.stdout.write(
            f"  Users:     demo-admin, demo-viewer, other-admin, admin (password {DEMO_PASSWORD})"
        )
        self.stdout.write(
            f"  Agencies:  {world.agency.name} (id {world.agency.id}), "
            f"{world.other_agency.name} (id {world.other_agency.id})"
        )
        for client in world.clients.values():
            self.stdout.write(f"  Client {client.id}: {client.client_name}, DOT {client.dot}")
