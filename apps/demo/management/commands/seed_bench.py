from django.core.management.base import BaseCommand
from django.db import connection

from apps.demo.bench_data import seed_bench


class Command(BaseCommand):
    help = "Create a fleet-scale benchmark dataset fast (COPY on PostgreSQL). Idempotent."

    def add_arguments(self, parser):
        parser.add_argument("--clients", type=int, default=20_000)
        parser.add_argument(
            "--vehicles",
            type=int,
            default=50_000,
            help="Units spread over the clients besides the two big fleets.",
        )
        parser.add_argument("--big-fleet", type=int, default=250_000)
        parser.add_argument("--medium-fleet", type=int, default=2_500)
        parser.add_argument("--drivers", type=int, default=50_000)
        parser.add_argument("--small-clients", type=int, default=200)

    def handle(self, *args, **options):
        seed_bench(
            clients=options["clients"],
            vehicles=options["vehicles"],
            big_fleet=options["big_fleet"],
            medium_fleet=options["medium_fleet"],
            drivers=options["drivers"],
            small_clients=options["small_clients"],
            out=self.stdout.write,
        )
        if connection.vendor == "postgresql":
            # Fresh statistics, and a visibility map so counts can use index-only scans.
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
