"""The licence state's code copied onto the driver (issue 18): `sort=licenseState` walks the
index (agency, license_state_code, id) instead of sorting every driver of the agency through an
outer join to the states. Existing drivers get the code of their state (null without one) in
one UPDATE; the states are the fixed USPS list, so the copy never goes stale."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def copy_codes(apps, schema_editor):
    Driver = apps.get_model("drivers", "Driver")
    State = apps.get_model("masterdata", "State")
    Driver._base_manager.filter(license_state__isnull=False).update(
        license_state_code=Subquery(
            State.objects.filter(pk=OuterRef("license_state_id")).values("code")[:1]
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("drivers", "0005_normalize_license_numbers"),
        ("masterdata", "0004_unique_name_messages"),
    ]

    operations = [
        migrations.AddField(
            model_name="driver",
            name="license_state_code",
            field=models.CharField(blank=True, editable=False, max_length=2, null=True),
        ),
        migrations.RunPython(copy_codes, migrations.RunPython.noop, elidable=True),
        migrations.AddIndex(
            model_name="driver",
            index=models.Index(
                fields=["agency", "license_state_code", "id"], name="drivers_agency_lstate_idx"
            ),
        ),
    ]
