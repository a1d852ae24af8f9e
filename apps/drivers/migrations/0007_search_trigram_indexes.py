"""`?q=` of the drivers' list, a contains-search of each word in a driver's first name, last
name and email, read from trigram indexes (with the licence number, exact, from its b-tree),
so PostgreSQL ORs four index reads instead of reading every driver (issue 18)."""

from django.db import migrations

from apps.core.search_indexes import trigram_index


class Migration(migrations.Migration):
    dependencies = [
        ("drivers", "0006_license_state_code"),
    ]

    operations = [
        trigram_index("drivers_first_name_trgm_idx", "drivers_driver", "first_name"),
        trigram_index("drivers_last_name_trgm_idx", "drivers_driver", "last_name"),
        trigram_index("drivers_email_trgm_idx", "drivers_driver", "email"),
    ]
