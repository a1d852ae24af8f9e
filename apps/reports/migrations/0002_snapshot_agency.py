# A snapshot records the agency it was frozen under: its producer and agency name are shown only
# to a viewer who acts for that agency. Snapshots frozen before take their policy's agency now.

import django.db.models.deletion
from django.db import migrations, models


def fill_snapshot_agency(apps, schema_editor):
    """Every snapshot without an agency takes its policy's (the copy of its client's agency)."""
    from django.db.models import OuterRef, Subquery

    Policy = apps.get_model("policies", "Policy")
    Report = apps.get_model("reports", "PolicyPremiumReport")
    agency_of_policy = Subquery(Policy.objects.filter(pk=OuterRef("policy_id")).values("agency_id")[:1])
    Report.objects.filter(snapshot_at__isnull=False, snapshot_agency__isnull=True).update(
        snapshot_agency_id=agency_of_policy
    )


class Migration(migrations.Migration):

    dependencies = [
        ('agencies', '0001_initial'),
        ('policies', '0003_policy_agency_unique_number'),
        ('reports', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='policypremiumreport',
            name='snapshot_agency',
            field=models.ForeignKey(blank=True, editable=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='agencies.agency'),
        ),
        migrations.RunPython(fill_snapshot_agency, migrations.RunPython.noop),
    ]
