"""A vehicle's copy of its make's name, and the agency-wide sort index over it (issue 18):
`sort=make` walked the makes in name order and sorted each make's units."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agencies", "0001_initial"),
        ("clients", "0004_uniqueness_message_names_the_record"),
        ("masterdata", "0004_unique_name_messages"),
        ("vehicles", "0006_vehicle_agency"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="vehicle",
            name="vehicles_agency_make_id_idx",
        ),
        migrations.AddField(
            model_name="vehicle",
            name="make_name",
            field=models.CharField(default="", editable=False, max_length=120),
        ),
        # Every vehicle's copy of its make's name, in one statement (SQLite and PostgreSQL).
        migrations.RunSQL(
            "UPDATE vehicles_vehicle SET make_name = (SELECT masterdata_make.name FROM"
            " masterdata_make WHERE masterdata_make.id = vehicles_vehicle.make_id)",
            migrations.RunSQL.noop,
        ),
        migrations.AddIndex(
            model_name="vehicle",
            index=models.Index(
                condition=models.Q(("deleted", False)),
                fields=["agency", "make_name", "id"],
                name="vehicles_agency_make_name_idx",
            ),
        ),
    ]
