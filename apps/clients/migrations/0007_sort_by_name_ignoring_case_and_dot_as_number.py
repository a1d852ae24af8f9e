"""The API's client orders by name ignoring case and by DOT as a number, each walked through
an index at a large agency (apps.core.sorting: IgnoringCase, AsNumber)."""

import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agencies', '0001_initial'),
        ('clients', '0006_dot_normalized_before_validation'),
        ('masterdata', '0004_unique_name_messages'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='client',
            index=models.Index(models.F('agency'), django.db.models.functions.text.Lower('client_name'), models.F('id'), name='clients_agency_name_ci_idx'),
        ),
        migrations.AddIndex(
            model_name='client',
            index=models.Index(models.F('agency'), django.db.models.functions.text.Length('dot'), models.F('dot'), models.F('id'), condition=models.Q(('deleted', False)), name='clients_agency_dot_number_idx'),
        ),
    ]
