"""The agency-wide searches of units (issue 18): `unit=` ignoring case, `vin=` as a prefix."""

from django.db import migrations, models
from django.db.models.functions import Upper


class Migration(migrations.Migration):
    dependencies = [
        ("vehicles", "0007_make_name_sort_column"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="vehicle",
            index=models.Index(
                models.F("agency"), Upper("unit"), name="vehicles_agency_unit_ci_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="vehicle",
            index=models.Index(
                condition=models.Q(("deleted", False)),
                fields=["agency", "serial_number"],
                name="vehicles_agency_vin_prefix_idx",
                opclasses=["int8_ops", "varchar_pattern_ops"],
            ),
        ),
        # The expression's statistics, which the planner needs to see that a unit matches few
        # rows, exist only after the table is analyzed (SQLite accepts the same).
        migrations.RunSQL("ANALYZE vehicles_vehicle", migrations.RunSQL.noop),
    ]
