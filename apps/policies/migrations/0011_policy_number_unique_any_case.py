"""A policy number is unique among the live policies of an agency and insurer whatever its case, as
the `policy` filter finds it (iexact): `gwc-al-1` was accepted beside `GWC-AL-1`, and the filter
then answered both. The exact unique index gives way to one on UPPER(policy_number).

Live policies stored before the rule may hold one number in two cases. Building the index over
them would stop the migration with the database's bare error, naming neither the policies nor
what to do; nor may a migration pick which policy to rename. So the rows are checked first, and
the migration refuses with the policies to rename (ids, agency, insurer, numbers), changing
nothing: the operator renames (or deletes) all but one of each group and migrates again."""

from collections import defaultdict

import django.db.models.functions.text
from django.conf import settings
from django.core.management.base import CommandError
from django.db import migrations, models
from django.db.models import Exists, OuterRef
from django.db.models.functions import Upper

CONSTRAINT = "policies_policy_unique_live_number_ci_per_agency_insurer"


class NumbersClashByCase(CommandError):
    """Live policies of one agency and insurer numbered alike but for case: `migrate` prints
    this message (a CommandError) instead of a traceback."""


def refuse_numbers_clashing_by_case(apps, schema_editor):
    """Refuse, naming them, live policies whose numbers differ only by case in one agency and
    for one insurer (what the new index forbids); let everything else through untouched."""
    Policy = apps.get_model("policies", "Policy")
    live = Policy._base_manager.filter(deleted=False, insurer__isnull=False).exclude(
        policy_number=None
    )
    twin = live.filter(agency_id=OuterRef("agency_id"), insurer_id=OuterRef("insurer_id")).annotate(
        number_key=Upper("policy_number")
    )
    clashing = (
        live.annotate(number_key=Upper("policy_number"))
        .filter(Exists(twin.filter(number_key=OuterRef("number_key")).exclude(pk=OuterRef("pk"))))
        .order_by("agency_id", "insurer_id", "number_key", "pk")
        .values_list(
            "agency_id",
            "agency__name",
            "insurer_id",
            "insurer__name",
            "number_key",
            "pk",
            "policy_number",
        )
    )
    groups = defaultdict(list)
    for agency_id, agency, insurer_id, insurer, key, pk, number in clashing:
        groups[(agency_id, agency, insurer_id, insurer, key)].append(f"policy {pk} '{number}'")
    if not groups:
        return
    lines = [
        f"- agency {agency_id} ({agency}), insurer {insurer_id} ({insurer}): " + ", ".join(rows)
        for (agency_id, agency, insurer_id, insurer, _), rows in groups.items()
    ]
    raise NumbersClashByCase(
        "Policy numbers become unique ignoring case among the live policies of an agency and "
        "insurer, and these live policies hold one number in different cases. Nothing was "
        "changed. Rename (or delete) all but one policy of each group, then migrate again:\n"
        + "\n".join(lines)
    )


class Migration(migrations.Migration):
    dependencies = [
        ("agencies", "0001_initial"),
        ("clients", "0006_dot_normalized_before_validation"),
        ("masterdata", "0004_unique_name_messages"),
        ("policies", "0010_policy_number_printable"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(refuse_numbers_clashing_by_case, migrations.RunPython.noop),
        migrations.RemoveConstraint(
            model_name="policy",
            name="policies_policy_unique_live_number_per_agency_insurer",
        ),
        migrations.AddConstraint(
            model_name="policy",
            constraint=models.UniqueConstraint(
                models.F("agency"),
                models.F("insurer"),
                django.db.models.functions.text.Upper("policy_number"),
                condition=models.Q(("deleted", False)),
                name=CONSTRAINT,
                violation_error_message=(
                    "A live policy numbered {policy_number} exists for this insurer in this agency."
                ),
            ),
        ),
    ]
