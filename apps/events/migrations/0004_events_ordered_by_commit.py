"""The change feed is ordered by commit (apps.events.positions): an event's `position`, taken by
its transaction just before it commits on PostgreSQL, replaces its transaction id (`txid`),
which was taken when the transaction first wrote or locked a row, before it waited for another
write's lock, so of two writes to one record the one applied second could come first.

The events already kept take their transaction id as their position, in the order the feed
showed them, so a cursor given before (a transaction id and an event id) is still a position
of this feed; the sequence of positions starts past every transaction id given so far. SQLite
had every transaction id 0 and has every position 0 (its writers are serialised: id order).
Back: the transaction id is the position again, which keeps the order and every cursor."""

from django.db import migrations, models

import apps.events.models

SEQUENCE = "events_event_position_seq"


def positions_from_transactions(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("UPDATE events_event SET position = txid")
    schema_editor.execute(f"CREATE SEQUENCE {SEQUENCE} AS bigint")
    # Past the transaction ids of every event and of every cursor given (each below the oldest
    # transaction running when it was given, so below this one's).
    schema_editor.execute(
        f"SELECT setval('{SEQUENCE}', GREATEST(txid_current(), "
        "(SELECT COALESCE(MAX(txid), 0) FROM events_event)) + 1, false)"
    )


def transactions_from_positions(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("UPDATE events_event SET txid = COALESCE(position, txid_current())")
    schema_editor.execute(f"DROP SEQUENCE {SEQUENCE}")


class Migration(migrations.Migration):
    dependencies = [("events", "0003_expiring_marks_name_their_notice")]

    operations = [
        migrations.AddField(
            model_name="event",
            name="position",
            field=models.BigIntegerField(
                db_default=apps.events.models.PendingPosition(), editable=False, null=True
            ),
        ),
        migrations.RunPython(positions_from_transactions, transactions_from_positions),
        migrations.RemoveIndex(model_name="event", name="event_feed_idx"),
        migrations.RemoveField(model_name="event", name="txid"),
        migrations.AlterModelOptions(name="event", options={"ordering": ["position", "id"]}),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(fields=["agency", "position", "id"], name="event_feed_idx"),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(position__isnull=True),
                fields=["id"],
                name="event_pending_idx",
            ),
        ),
    ]
