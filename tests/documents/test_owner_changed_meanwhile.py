"""An upload whose owner moves to another agency, or is deleted, while its file is stored.

The owner is judged before the file is stored, and again under its lock when the row is
written: a move or a deletion committed in between is what the upload sees. Before, the row
was written for the owner as first read: a client moved meanwhile got a document its new
agency never heard of, announced to the agency it had left, and the answer was a 500 after the
commit (the caller could no longer read what it had just stored); a client deleted meanwhile
took a new file (a race of a concurrency probe, made deterministic here by moving the owner
from inside the storage call).
"""

from __future__ import annotations

import pytest

from apps.clients.services import client_update
from apps.documents import services
from apps.documents.models import Document
from apps.events.models import Event
from tests.conftest import assert_problem
from tests.documents.test_api import stored_files, upload
from tests.factories import PolicyFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db):
    return UserFactory(username="root", is_superuser=True)


def change_owner_while_storing(monkeypatch, change):
    real_store = services.store

    def store(file, **kwargs):
        change()  # committed while this upload stores its file
        return real_store(file, **kwargs)

    monkeypatch.setattr(services, "store", store)


@pytest.mark.parametrize("module", ["clients", "policies"])
@pytest.mark.parametrize("change", ["moved", "deleted"])
def test_an_upload_sees_its_owner_moved_or_deleted_while_its_file_was_stored(
    api, carrier, root, other_agency, monkeypatch, settings, module, change
):
    policy = PolicyFactory(client=carrier)
    owner = carrier if module == "clients" else policy
    changes = {"agency_id": other_agency.id} if change == "moved" else {"deleted": True}
    change_owner_while_storing(
        monkeypatch, lambda: client_update(user=root, instance=carrier, **changes)
    )
    events = Event.objects.count()

    response = upload(api, owner, module=module)

    field = "clientId" if module == "clients" else "policyId"
    body = assert_problem(response, 400)
    assert field in str(body["errors"]), body
    assert Document.objects.count() == 0
    assert stored_files(settings) == []
    uploaded = Event.objects.filter(type="document.uploaded")
    assert not uploaded.exists()
    assert Event.objects.count() > events  # the move or deletion itself, announced
