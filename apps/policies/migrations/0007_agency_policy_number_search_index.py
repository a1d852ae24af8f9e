"""`?policy=` of the policies' list, ignoring case, read from an index (issue 18)."""

import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agencies', '0001_initial'),
        ('clients', '0004_uniqueness_message_names_the_record'),
        ('masterdata', '0004_unique_name_messages'),
        ('policies', '0006_date_order_errors_name_the_field'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='policy',
            index=models.Index(models.F('agency'), django.db.models.functions.text.Upper('policy_number'), name='policies_agency_number_ci_idx'),
        ),
        migrations.RunSQL("ANALYZE policies_policy", migrations.RunSQL.noop),
    ]
