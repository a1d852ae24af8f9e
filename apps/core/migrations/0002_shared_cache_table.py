"""The table of the database cache, when the settings use one (`make run`'s default: every
process of a machine's service shares it, as the login-failure and rate-limit counters must;
contract section 1). Created by Django's `createcachetable`, which does nothing for another
cache (Redis) and nothing when the table exists, so any `migrate` leaves a database ready."""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("core", "0001_initial")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
