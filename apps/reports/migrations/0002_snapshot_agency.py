# A snapshot records the agency it was frozen under: its producer and agency name are shown only
# to a viewer who acts for that agency. Snapshots frozen before take the agency their policy's
# client was in when they were frozen, read from the records' history.

import django.db.models.deletion
from django.db import migrations, models


def fill_snapshot_agency(apps, schema_editor):
    """Every snapshot without an agency takes the one it was frozen under: the agency of the
    client its policy had at `snapshot_at`, each as its newest version recorded by then says (a
    client moved since keeps the old agency here, whose staff froze it). Where the history does
    not say (no version recorded by then), none is recorded: only a superuser sees the names."""
    HistoricalPolicy = apps.get_model("policies", "HistoricalPolicy")
    HistoricalClient = apps.get_model("clients", "HistoricalClient")
    Report = apps.get_model("reports", "PolicyPremiumReport")
    newest = ("-history_date", "-history_id")
    frozen = Report.objects.filter(snapshot_at__isnull=False, snapshot_agency__isnull=True)
    for report in frozen.only("id", "policy_id", "snapshot_at").iterator():
        client_id = (
            HistoricalPolicy.objects.filter(
                id=report.policy_id, history_date__lte=report.snapshot_at
            )
            .order_by(*newest)
            .values_list("client_id", flat=True)
            .first()
        )
        agency_id = (
            HistoricalClient.objects.filter(id=client_id, history_date__lte=report.snapshot_at)
            .order_by(*newest)
            .values_list("agency_id", flat=True)
            .first()
            if client_id is not None
            else None
        )
        if agency_id is not None:
            Report.objects.filter(pk=report.pk).update(snapshot_agency_id=agency_id)


class Migration(migrations.Migration):
    dependencies = [
        ("agencies", "0001_initial"),
        ("clients", "0002_historicalclient"),
        ("policies", "0003_policy_agency_unique_number"),
        ("reports", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="policypremiumreport",
            name="snapshot_agency",
            field=models.ForeignKey(
                blank=True,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="agencies.agency",
            ),
        ),
        migrations.RunPython(fill_snapshot_agency, migrations.RunPython.noop),
    ]
