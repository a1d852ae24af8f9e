"""The API's driver orders by name ignoring case, each walked through an index at a large
agency (apps.core.sorting.IgnoringCase)."""

import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agencies', '0001_initial'),
        ('clients', '0007_sort_by_name_ignoring_case_and_dot_as_number'),
        ('drivers', '0008_identifiers_normalized_before_validation'),
        ('masterdata', '0004_unique_name_messages'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='driver',
            index=models.Index(models.F('agency'), django.db.models.functions.text.Lower('last_name'), django.db.models.functions.text.Lower('first_name'), models.F('id'), name='drivers_agency_name_ci_idx'),
        ),
        migrations.AddIndex(
            model_name='driver',
            index=models.Index(models.F('agency'), django.db.models.functions.text.Lower('first_name'), models.F('id'), name='drivers_agency_first_ci_idx'),
        ),
    ]
