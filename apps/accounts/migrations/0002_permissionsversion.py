"""The permissions version and the triggers that move it (issue 18, contract section 13)."""

from django.conf import settings
from django.db import migrations, models

FUNCTION = "accounts_permissions_moved"
# Random, never a counter: see PermissionsVersion.
PG_NEW_VERSION = "(random() * 9.2e18)::bigint"
SQLITE_NEW_VERSION = "random()"


def _tables(apps) -> list[str]:
    user = apps.get_model(settings.AUTH_USER_MODEL)
    group = apps.get_model("auth", "Group")
    return [
        user._meta.get_field("groups").remote_field.through._meta.db_table,
        user._meta.get_field("user_permissions").remote_field.through._meta.db_table,
        group._meta.get_field("permissions").remote_field.through._meta.db_table,
        group._meta.db_table,
        apps.get_model("auth", "Permission")._meta.db_table,
        apps.get_model("contenttypes", "ContentType")._meta.db_table,
    ]


def _upsert(table: str, new_version: str) -> str:
    return (
        f"INSERT INTO {table} (id, version) VALUES (1, {new_version})"
        f" ON CONFLICT (id) DO UPDATE SET version = {new_version}"
    )


def create_triggers(apps, schema_editor):
    version_table = apps.get_model("accounts", "PermissionsVersion")._meta.db_table
    vendor = schema_editor.connection.vendor
    execute = schema_editor.execute
    if vendor == "postgresql":
        execute(
            f"CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN {_upsert(version_table, PG_NEW_VERSION)}; RETURN NULL; END $$"
        )
        for table in _tables(apps):
            execute(
                f"CREATE TRIGGER {FUNCTION} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE"
                f" ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}()"
            )
    elif vendor == "sqlite":
        for table in _tables(apps):
            for event in ("INSERT", "UPDATE", "DELETE"):
                execute(
                    f"CREATE TRIGGER {FUNCTION}_{table}_{event.lower()} AFTER {event} ON {table}"
                    f" BEGIN {_upsert(version_table, SQLITE_NEW_VERSION)}; END"
                )
    else:  # pragma: no cover - the project runs on PostgreSQL and SQLite only
        raise NotImplementedError(f"no permission triggers for {vendor}")
    execute(_upsert(version_table, "1"))


def drop_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table in _tables(apps):
        if vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {FUNCTION} ON {table}")
        else:
            for event in ("insert", "update", "delete"):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {FUNCTION}_{table}_{event}")
    if vendor == "postgresql":
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {FUNCTION}()")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="PermissionsVersion",
            fields=[
                (
                    "id",
                    models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False),
                ),
                ("version", models.BigIntegerField(default=0)),
            ],
            options={"verbose_name": "permissions version"},
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
