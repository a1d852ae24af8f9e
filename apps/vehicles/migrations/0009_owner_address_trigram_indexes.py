"""`?owner=` and `?garagingAddress=` of the units' list, contains-searches, read from trigram
indexes (issue 18)."""

from django.db import migrations

from apps.core.search_indexes import trigram_index


class Migration(migrations.Migration):
    dependencies = [
        ("vehicles", "0008_agency_wide_search_indexes"),
    ]

    operations = [
        trigram_index("vehicles_owner_trgm_idx", "vehicles_vehicle", "owner"),
        trigram_index("vehicles_garaging_trgm_idx", "vehicles_vehicle", "garaging_address"),
    ]
