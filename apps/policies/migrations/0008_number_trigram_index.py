"""`?q=` of the policies' list: the policy number, a contains-search, read from a trigram
index, beside the client ids and insurer ids the search has found (issue 18)."""

from django.db import migrations

from apps.core.search_indexes import trigram_index


class Migration(migrations.Migration):
    dependencies = [
        ("policies", "0007_agency_policy_number_search_index"),
    ]

    operations = [
        trigram_index("policies_number_trgm_idx", "policies_policy", "policy_number"),
    ]
