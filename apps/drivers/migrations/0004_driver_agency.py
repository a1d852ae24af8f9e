# Written as vehicles/0006: the copy added nullable, filled from the client, then made not null.

import django.db.models.deletion
from django.db import migrations, models


def copy_client_agency(apps, schema_editor):
    """Every driver (and its history) takes its client's agency."""
    from django.db.models import OuterRef, Subquery

    Client = apps.get_model("clients", "Client")
    agency_of_client = Subquery(
        Client.objects.filter(pk=OuterRef("client_id")).values("agency_id")[:1]
    )
    for name in ("Driver", "HistoricalDriver"):
        apps.get_model("drivers", name).objects.update(agency_id=agency_of_client)


def sort_index(columns: list[str], name: str) -> migrations.AddIndex:
    return migrations.AddIndex(
        model_name="driver",
        index=models.Index(fields=["agency", *columns, "id"], name=f"drivers_agency_{name}"),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("agencies", "0001_initial"),
        ("clients", "0004_uniqueness_message_names_the_record"),
        ("drivers", "0003_historicaldriver"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicaldriver",
            name="agency",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="agencies.agency",
            ),
        ),
        migrations.AddField(
            model_name="driver",
            name="agency",
            field=models.ForeignKey(
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="agencies.agency",
            ),
        ),
        migrations.RunPython(copy_client_agency, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="driver",
            name="agency",
            field=models.ForeignKey(
                db_index=False,
                editable=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="agencies.agency",
            ),
        ),
        sort_index(["last_name", "first_name"], "name_idx"),
        sort_index(["first_name"], "first_idx"),
        sort_index(["client"], "client_idx"),
        sort_index(["status"], "status_idx"),
        sort_index(["license_number"], "licence_idx"),
        sort_index(["hire_date"], "hired_idx"),
        sort_index(["created_at"], "created_idx"),
        sort_index(["updated_at"], "updated_idx"),
        sort_index([], "id_idx"),
    ]
