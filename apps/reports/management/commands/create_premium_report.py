from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from apps.policies.models import Policy
from apps.reports.services import premium_report_create


class Command(BaseCommand):
    help = "Create a policy premium report and print only its id."

    def add_arguments(self, parser):
        parser.add_argument("policy_id", type=int)
        parser.add_argument("--period", help="YYYY-MM (default: the current month)")
        parser.add_argument("--snapshot", action="store_true", help="Store the computed mapping.")

    def handle(self, *args, policy_id: int, period=None, snapshot=False, **options):
        policy = Policy.objects.filter(pk=policy_id).first()
        if policy is None:
            raise CommandError(f"No policy with id {policy_id}.")
        try:
            report = premium_report_create(
                user=None, policy=policy, period=period, snapshot=snapshot
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(str(report.id))
