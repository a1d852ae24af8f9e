"""Who fields (`createdBy`, `updatedBy`, `uploadedBy`, an audit entry's `by`) name a user only
to the staff of an agency that user is a member of (superusers, who act for every agency, are
named to all); to anyone else the field is null (docs/api_intro.md, conventions).

A record that moved from Other Agency into Demo Agency keeps the stamps its old agency's staff
left on it: Demo Agency's callers read them as null, never the other agency's people. Walked
over HTTP with real credentials; the move made by a manager of both agencies, as the API
allows it.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.agencies.models import AgencyMembership
from tests.conftest import user_rows_read
from tests.factories import (
    ClientFactory,
    DriverFactory,
    PolicyFactory,
    UserFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db
THEIRS = "other-manager"


def ok(response):
    assert response.status_code in (200, 201), response.content
    return response.json()


@pytest.fixture
def both(make_api, groups, agency, other_agency):
    """A manager of both agencies: the one who may move a client between them."""
    user = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    return make_api(user)


@pytest.fixture
def moved_in(other_api, other_manager, both, rival, agency):
    """The other agency's client with a policy, a unit, a driver and a document, all stamped
    by its manager, then moved into Demo Agency."""
    stamps = {"created_by": other_manager, "updated_by": other_manager}
    rival.created_by = rival.updated_by = other_manager
    rival.save(update_fields=["created_by", "updated_by"])
    records = {
        "policy": PolicyFactory(client=rival, **stamps),
        "vehicle": VehicleFactory(client=rival, **stamps),
        "driver": DriverFactory(client=rival, **stamps),
    }
    upload = {"file": SimpleUploadedFile("theirs.pdf", b"%PDF-1.4"), "clientId": rival.id}
    records["document"] = ok(other_api.post("/v1/documents/clients", upload, format="multipart"))
    assert ok(other_api.get(f"/v1/clients/{rival.id}"))["createdBy"] == THEIRS  # named at home
    ok(both.put(f"/v1/clients/{rival.id}", {"agencyId": agency.id}, format="json"))
    return rival, records


def test_the_records_of_a_client_that_moved_in_name_none_of_the_old_agencys_people(api, moved_in):
    client, records = moved_in
    answers = {
        "client": ok(api.get(f"/v1/clients/{client.id}")),
        "policy": ok(api.get(f"/v1/policies/{records['policy'].id}")),
        "vehicle": ok(api.get(f"/v1/vehicles/{records['vehicle'].id}")),
        "driver": ok(api.get(f"/v1/drivers/{records['driver'].id}")),
    }
    for kind, answer in answers.items():
        assert answer["createdBy"] is None, kind
    assert answers["client"]["updatedBy"] == "both"  # the mover is a member of Demo Agency
    for kind in ("policy", "vehicle", "driver"):
        assert answers[kind]["updatedBy"] is None, kind
    audit = answers["vehicle"]["audit"]
    assert audit["createdBy"] is None and audit["updatedBy"] is None
    (document,) = ok(api.get("/v1/documents/clients", {"clientId": client.id}))["results"]
    assert document["uploadedBy"] is None


@pytest.mark.parametrize(
    "path", ["/v1/clients", "/v1/policies", "/v1/vehicles", "/v1/drivers", "/v1/events"]
)
def test_lists_and_the_change_feed_name_none_of_the_old_agencys_people(api, moved_in, path):
    body = api.get(path, {"limit": 200})
    assert body.status_code == 200, body.content
    assert THEIRS not in body.content.decode()


def test_the_old_agency_reads_its_own_people_and_a_member_is_named_to_every_agency_of_theirs(
    other_api, make_api, groups, agency, other_agency, other_manager, rival
):
    rival.created_by = other_manager
    rival.save(update_fields=["created_by"])
    assert ok(other_api.get(f"/v1/clients/{rival.id}"))["createdBy"] == THEIRS
    # A member of both agencies who reads it through their membership of Other Agency.
    both = UserFactory(username="reader", agencies=[agency, other_agency], groups=[groups[0]])
    assert ok(make_api(both).get(f"/v1/clients/{rival.id}"))["createdBy"] == THEIRS


def test_a_user_who_left_the_agency_is_no_longer_named(api, agency, groups, carrier):
    former = UserFactory(username="former-clerk", agencies=[agency], groups=[groups[0]])
    carrier.created_by = former
    carrier.save(update_fields=["created_by"])
    assert ok(api.get(f"/v1/clients/{carrier.id}"))["createdBy"] == "former-clerk"
    AgencyMembership.objects.filter(user=former).delete()
    assert ok(api.get(f"/v1/clients/{carrier.id}"))["createdBy"] is None


def test_a_superuser_is_named_to_every_agency(api, carrier):
    """The operator's superusers act for every agency (`agency_ids_for`): the demo's records,
    written by "admin", say so to the agency's staff."""
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    carrier.created_by = root
    carrier.save(update_fields=["created_by"])
    assert ok(api.get(f"/v1/clients/{carrier.id}"))["createdBy"] == "root"


def test_a_page_of_moved_in_records_costs_one_query_for_its_people(
    api, both, agency, other_agency, other_manager, manager, django_assert_num_queries
):
    """Which people a caller may see named is read once per page (when a who field names
    someone), whatever the page's size: 5 or 30 clients, half of them moved in, cost the same."""
    for n in range(30):
        mine = n % 2 == 0
        ClientFactory(
            agency=agency if mine else other_agency,
            client_name=f"Fleet {n:02d}",
            created_by=manager if mine else other_manager,
            updated_by=manager if mine else other_manager,
        )
    for moving in ClientFactory._meta.model.objects.filter(agency=other_agency):
        ok(both.put(f"/v1/clients/{moving.id}", {"agencyId": agency.id}, format="json"))
    api.get("/v1/clients?limit=1")  # warm the API-key cache
    with django_assert_num_queries(5) as small:
        page = ok(api.get("/v1/clients?limit=5"))["results"]
    assert len(page) == 5
    with django_assert_num_queries(5) as large:
        page = ok(api.get("/v1/clients?limit=200"))["results"]
    assert len(page) == 30
    assert {row["createdBy"] for row in page} == {"manager", None}
    assert {row["updatedBy"] for row in page} == {"manager", "both"}
    assert len(small.captured_queries) == len(large.captured_queries)


def test_a_page_reads_only_the_people_it_names_in_one_query_whatever_its_authors(
    api, agency, groups
):
    """Whom a page may name is read for the people its who fields name, not for every member
    of the caller's agencies: 50 more staff named nowhere read no more users, and a page
    whose every row has its own author costs the queries of a page of one row."""
    for n in range(30):
        author = UserFactory(username=f"clerk-{n:02d}", agencies=[agency], groups=[groups[0]])
        ClientFactory(
            agency=agency, client_name=f"Fleet {n:02d}", created_by=author, updated_by=author
        )
    api.get("/v1/clients?limit=1")  # warm the API-key cache
    with CaptureQueriesContext(connection) as one:
        (row,) = ok(api.get("/v1/clients?limit=1"))["results"]
    assert row["createdBy"].startswith("clerk-")
    read = user_rows_read(one)
    for n in range(50):
        UserFactory(username=f"idle-{n:02d}", agencies=[agency], groups=[groups[1]])
    with CaptureQueriesContext(connection) as idle:
        assert ok(api.get("/v1/clients?limit=1"))["results"] == [row]
    assert user_rows_read(idle) == read
    with CaptureQueriesContext(connection) as thirty:
        page = ok(api.get("/v1/clients?limit=200"))["results"]
    assert {r["createdBy"] for r in page} == {f"clerk-{n:02d}" for n in range(30)}
    assert len(thirty.captured_queries) == len(one.captured_queries)
