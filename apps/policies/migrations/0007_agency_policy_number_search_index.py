"""`?policy=` of the policies' list, ignoring case, read from an index (issue 18)."""

from django.db import migrations, models
from django.db.models.functions import Upper


class Migration(migrations.Migration):
    dependencies = [
        ("policies", "0006_date_order_errors_name_the_field"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="policy",
            index=models.Index(
                models.F("agency"), Upper("policy_number"), name="policies_agency_number_ci_idx"
            ),
        ),
        # The expression's statistics, which the planner needs to see that a number matches
        # few policies, exist only after the table is analyzed (SQLite accepts the same).
        migrations.RunSQL("ANALYZE policies_policy", migrations.RunSQL.noop),
    ]
