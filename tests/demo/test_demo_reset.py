"""`seed_demo --reset`: back to the documented demo world, ids included, however it was used.

docs/api.md is replayed against fixed ids (client 1, the new client is 5, …), so the reset
must empty what the calls created and restart every id sequence; master data is kept.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command

from apps.clients.models import Client
from apps.documents.models import Document
from apps.masterdata.models import City, Insurer
from apps.vehicles.models import Vehicle

pytestmark = pytest.mark.usefixtures("master_data_back")


def _world() -> dict:
    return {
        "clients": list(Client.objects.order_by("id").values_list("id", "client_name", "deleted")),
        "vehicles": list(Vehicle.objects.order_by("id").values_list("id", "serial_number")),
        "documents": list(Document.objects.order_by("id").values_list("id", "file_name")),
    }


def test_reset_brings_back_the_seeded_world_with_the_same_ids(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    call_command("seed_demo", "--force", stdout=StringIO())
    # Ids of a seed on an empty database (earlier tests may have used the sequences).
    call_command("seed_demo", "--force", "--reset", stdout=StringIO())
    seeded = _world()
    assert [c[0] for c in seeded["clients"]] == [1, 2, 3, 4]
    cities = City.objects.count()
    old_files = list(Document.objects.values_list("storage_name", flat=True))

    # What a replay of docs/api.md does: create, soft-delete, and add records.
    lone_star = Client.objects.get(dot="1234567")
    Client.objects.create(agency=lone_star.agency, client_name="Austin Movers LLC", dot="5550001")
    Vehicle.objects.filter(client=lone_star).update(deleted=True)
    Insurer.objects.create(name="Staff Added Mutual", name_key="staff added mutual", naic="99999")

    out = StringIO()
    call_command("seed_demo", "--force", "--reset", stdout=out)
    assert "Demo data emptied" in out.getvalue()
    assert _world() == seeded  # same records, same ids, nothing deleted
    assert City.objects.count() == cities  # master data kept, not reloaded from scratch
    assert Insurer.objects.filter(name="Staff Added Mutual").exists()
    assert all(not default_storage.exists(name) for name in old_files)
    assert all(default_storage.exists(d.storage_name) for d in Document.objects.all())

    call_command("seed_demo", "--force", "--reset", stdout=StringIO())
    assert _world() == seeded  # any number of times
