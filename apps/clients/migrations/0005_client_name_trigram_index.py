"""`?name=` of the clients' list, a contains-search, read from a trigram index (issue 18)."""

from django.db import migrations

from apps.core.search_indexes import trigram_index


class Migration(migrations.Migration):
    dependencies = [
        ("clients", "0004_uniqueness_message_names_the_record"),
    ]

    operations = [
        trigram_index("clients_name_trgm_idx", "clients_client", "client_name"),
    ]
