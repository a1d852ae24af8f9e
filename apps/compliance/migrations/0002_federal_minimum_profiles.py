"""Every agency that exists before profiles gets its built-in federal-minimum profile."""

from django.db import migrations

CODE = "federal-minimum"
NAME = "Federal minimum (49 CFR 387.9)"
RULES = [{"kind": "federal_minimum"}]


def create_built_ins(apps, schema_editor):
    Agency = apps.get_model("agencies", "Agency")
    RequirementProfile = apps.get_model("compliance", "RequirementProfile")
    have = set(
        RequirementProfile.objects.filter(built_in=True).values_list("agency_id", flat=True)
    )
    RequirementProfile.objects.bulk_create(
        [
            RequirementProfile(agency_id=pk, name=NAME, code=CODE, rules=RULES, built_in=True)
            for pk in Agency.objects.values_list("pk", flat=True)
            if pk not in have
        ]
    )


class Migration(migrations.Migration):
    dependencies = [
        ("compliance", "0001_initial"),
        ("agencies", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_built_ins, migrations.RunPython.noop)]
