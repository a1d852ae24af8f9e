"""The agency-wide searches of units (issue 18): `unit=` ignoring case, `vin=` as a prefix."""

import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agencies', '0001_initial'),
        ('clients', '0004_uniqueness_message_names_the_record'),
        ('masterdata', '0004_unique_name_messages'),
        ('vehicles', '0007_make_name_sort_column'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='vehicle',
            index=models.Index(models.F('agency'), django.db.models.functions.text.Upper('unit'), name='vehicles_agency_unit_ci_idx'),
        ),
        migrations.AddIndex(
            model_name='vehicle',
            index=models.Index(condition=models.Q(('deleted', False)), fields=['agency', 'serial_number'], name='vehicles_agency_vin_prefix_idx', opclasses=['int8_ops', 'varchar_pattern_ops']),
        ),
        # The expression's statistics, which the planner needs to see that a unit matches few
        # rows, exist only after the table is analyzed (as on SQLite, where this is the same).
        migrations.RunSQL("ANALYZE vehicles_vehicle", migrations.RunSQL.noop),
    ]
