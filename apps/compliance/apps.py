from django.apps import AppConfig
from django.db.models.signals import post_save


def _agency_created(sender, instance, created, raw=False, **kwargs):
    if created and not raw:
        from apps.compliance.services import federal_minimum_ensure

        federal_minimum_ensure(agency_ids=[instance.pk])


class ComplianceConfig(AppConfig):
    name = "apps.compliance"
    label = "compliance"
    verbose_name = "Compliance"

    def ready(self):
        # Every agency has its federal-minimum profile (contract section 15), whatever creates
        # the agency: the admin, the demo seed, a shell or a fixture. Agencies sit below this
        # app, so they cannot call it; existing agencies got theirs in migration 0002.
        post_save.connect(
            _agency_created, sender="agencies.Agency", dispatch_uid="compliance-federal-minimum"
        )
