"""The calendar's `policy.expiring` marks name their notice (`policy.expiring:30`,
`policy.expiring:7`, apps.coverages.calendar._mark): one mark per policy and day claimed both
notices, so a policy moved onto its 7-day mark on the day it had its 30-day notice never got
the second. A mark the previous code wrote (`policy.expiring`) is renamed after the notice its
event announced (the event of that policy and `asOf` day, which the mark was written with);
only the upgrade day's marks are ever read again (no day before it is run or written again),
so a mark whose event has been pruned stays as it was, claiming nothing, until the prune
removes it. Back: both notices' marks become `policy.expiring` again, one per policy and day.
The format is frozen here, as migrations must be."""

from django.db import migrations
from django.db.models import Exists, OuterRef

BATCH = 2000
LEGACY = "policy.expiring"


def name_the_notice(apps, schema_editor):
    CalendarMark = apps.get_model("events", "CalendarMark")
    Event = apps.get_model("events", "Event")
    announced = {}
    for data in Event.objects.filter(type=LEGACY).values_list("data", flat=True).iterator(BATCH):
        if {"policyId", "asOf", "daysLeft"} <= data.keys():
            announced[(data["policyId"], data["asOf"])] = data["daysLeft"]
    renamed = []
    marks = CalendarMark.objects.filter(type=LEGACY).values_list("pk", "policy_id", "day")
    for pk, policy_id, day in marks.iterator(BATCH):
        days_left = announced.get((policy_id, day.isoformat()))
        if days_left is not None:
            renamed.append(CalendarMark(pk=pk, type=f"{LEGACY}:{days_left}"))
    CalendarMark.objects.bulk_update(renamed, ["type"], batch_size=BATCH)


def one_mark_per_day(apps, schema_editor):
    """Set-based (three statements, however many marks): a 7-day mark beside a 30-day or a
    legacy one of the same policy and day goes, so does a 30-day one beside a legacy one, and
    what is left is renamed `policy.expiring`."""
    CalendarMark = apps.get_model("events", "CalendarMark")
    same = {"policy_id": OuterRef("policy_id"), "day": OuterRef("day")}
    thirty, seven = f"{LEGACY}:30", f"{LEGACY}:7"
    CalendarMark.objects.filter(type=seven).filter(
        Exists(CalendarMark.objects.filter(type__in=[LEGACY, thirty], **same))
    ).delete()
    CalendarMark.objects.filter(type=thirty).filter(
        Exists(CalendarMark.objects.filter(type=LEGACY, **same))
    ).delete()
    CalendarMark.objects.filter(type__in=[thirty, seven]).update(type=LEGACY)


class Migration(migrations.Migration):
    dependencies = [("events", "0002_drop_unused_heartbeat_day")]

    operations = [migrations.RunPython(name_the_notice, one_mark_per_day)]
