"""A plate stored before plates were ASCII letters and digits ('ЖЖ-1711') kept the key of its
ASCII part ('1711'), so a lookup of plate 1711 found it. Such a plate has no key now
(apps.core.identifiers.plate_key): found by its VIN, by no plate. Only the rows whose plate
holds a character beyond ASCII are read."""

from django.db import migrations

from apps.core.identifiers import plate_key


def forget_keys(apps, schema_editor):
    Vehicle = apps.get_model("vehicles", "Vehicle")
    beyond_ascii = Vehicle.objects.filter(license_plate__regex=r"[^\x00-\x7f]")
    for pk, plate in beyond_ascii.values_list("pk", "license_plate").iterator():
        Vehicle.objects.filter(pk=pk).update(license_plate_key=plate_key(plate))


class Migration(migrations.Migration):
    dependencies = [("vehicles", "0013_identifiers_normalized_before_validation")]

    operations = [migrations.RunPython(forget_keys, migrations.RunPython.noop)]
