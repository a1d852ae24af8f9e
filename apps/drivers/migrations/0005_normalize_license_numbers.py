"""Licence numbers stored before the one rule (issue 14): the admin's forms and the fleet import
stored them as typed (` tx77 `), which the `licenseNumber` filter, upper-casing what it is asked,
never found. They are rewritten in the rule's form: trimmed, upper case. The rule is frozen here
as it stood (`drivers.models.normalize_license_number`), as migrations must be; a number whose
upper case would not fit the column (`ß` becomes `SS`) is left as it was. History rows keep what
was written at the time."""

from django.db import migrations

BATCH = 2000


def normalize(apps, schema_editor):
    Driver = apps.get_model("drivers", "Driver")
    max_length = Driver._meta.get_field("license_number").max_length
    changed = []
    rows = Driver._base_manager.values_list("pk", "license_number").iterator(chunk_size=BATCH)
    for pk, number in rows:
        normalized = number.strip().upper()
        if normalized != number and len(normalized) <= max_length:
            changed.append(Driver(pk=pk, license_number=normalized))
    Driver._base_manager.bulk_update(changed, ["license_number"], batch_size=BATCH)


class Migration(migrations.Migration):
    dependencies = [("drivers", "0004_driver_agency")]

    operations = [migrations.RunPython(normalize, migrations.RunPython.noop, elidable=True)]
