"""A client that moves to another agency (a user of both, contract section 5) takes its policies
and units along and leaves behind what belongs to its old agency: producers and lienholders
are kept per agency, and a child client cannot be left naming a parent its agency cannot see."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.clients.models import Client
from apps.masterdata.models import Insurer
from tests.admin.formdata import form_data
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem, staff_member
from tests.factories import (
    ClientFactory,
    LienholderFactory,
    PolicyFactory,
    ProducerFactory,
    UserFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def both(make_api, groups, agency, other_agency):
    return make_api(
        UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    )


def test_its_policies_and_units_leave_the_old_agencys_producer_and_lienholder(
    both, api, other_api, agency, other_agency, carrier
):
    policy = PolicyFactory(client=carrier, producer=ProducerFactory(agency=agency))
    unit = VehicleFactory(client=carrier, lienholder=LienholderFactory(agency=agency))
    kept = LienholderFactory(agency=other_agency)
    other_unit = VehicleFactory(client=carrier, lienholder=kept)  # already the new agency's

    moved = both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json")
    assert moved.status_code == 200, moved.content

    policy_body = other_api.get(f"/v1/policies/{policy.id}").json()
    assert (policy_body["agencyId"], policy_body["producerId"]) == (other_agency.id, None)
    assert other_api.get(f"/v1/vehicles/{unit.id}").json()["lienholder"] is None
    assert other_api.get(f"/v1/vehicles/{other_unit.id}").json()["lienholder"]["id"] == kept.id
    assert_problem(api.get(f"/v1/policies/{policy.id}"), 404)


@pytest.mark.parametrize("deleted", [False, True])
def test_a_parent_with_children_cannot_move(both, api, agency, other_agency, carrier, deleted):
    child = ClientFactory(agency=agency, parent_client=carrier, deleted=deleted)

    refused = assert_problem(
        both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json"), 400
    )
    assert field_errors(refused) == {
        "agencyId": "A client with child clients (deleted ones included) cannot move to another "
        "agency."
    }
    assert Client.objects.get(pk=carrier.pk).agency_id == agency.id
    # Detached, the child stays editable by its agency and the parent may move.
    detached = api.put(f"/v1/clients/{child.id}", {"parentClientId": None}, format="json")
    assert detached.status_code == 200, detached.content
    moved = both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json")
    assert moved.status_code == 200, moved.content
    assert (
        api.put(f"/v1/clients/{child.id}", {"phone": "555-0100"}, format="json").status_code == 200
    )


def test_each_agency_hears_that_the_client_and_its_units_moved(
    both, api, other_api, agency, other_agency, carrier
):
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    scheduled = api.post(
        "/v1/vehicles/coverages",
        {
            "vehicleId": unit.id,
            "policyId": policy.id,
            "policyAddedDate": str(policy.effective_date),
        },
        format="json",
    )
    assert scheduled.status_code == 201, scheduled.content
    bare = VehicleFactory(client=carrier)  # not covered: INACTIVE
    after = api.get("/v1/events").json()["next"]

    moved = both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json")
    assert moved.status_code == 200, moved.content

    def statuses(caller, cursor=None):
        query = "type=carrier.status_changed&type=vehicle.status_changed"
        body = caller.get(f"/v1/events?{query}" + (f"&after={cursor}" if cursor else "")).json()
        return sorted(
            (
                e["type"],
                e["agencyId"],
                e["data"].get("clientId", e["data"].get("vehicleId")),
                e["data"]["from"],
                e["data"]["to"],
            )
            for e in body["results"]
        )

    assert statuses(api, after) == [
        ("carrier.status_changed", agency.id, carrier.id, "ACTIVE", "NOT_FOUND"),
        ("vehicle.status_changed", agency.id, unit.id, "ACTIVE", "NOT_FOUND"),
        ("vehicle.status_changed", agency.id, bare.id, "INACTIVE", "NOT_FOUND"),
    ]
    assert statuses(other_api) == [
        ("carrier.status_changed", other_agency.id, carrier.id, "NOT_FOUND", "ACTIVE"),
        ("vehicle.status_changed", other_agency.id, unit.id, "NOT_FOUND", "ACTIVE"),
        ("vehicle.status_changed", other_agency.id, bare.id, "NOT_FOUND", "INACTIVE"),
    ]
    # What the old agency's verification now answers, as its events said.
    assert_problem(api.get(f"/v1/coverages/clients?dot={carrier.dot}"), 404)


def _whole(caller, path: str, **changes) -> dict:
    """The record as read, with `changes`: what a client that GETs, edits and PUTs sends."""
    body = caller.get(path).json()
    return {**body, **changes}


def test_a_whole_record_sent_back_with_a_new_agency_leaves_its_links_behind(
    both, other_api, agency, other_agency, carrier
):
    # The producer or lienholder sent as it was read is the old agency's: the move leaves it
    # behind, as when it is not sent, instead of a 400 on a field the caller did not change.
    carrier.producer = ProducerFactory(agency=agency)
    carrier.save()
    policy = PolicyFactory(client=carrier, producer=ProducerFactory(agency=agency))
    unit = VehicleFactory(client=carrier, lienholder=LienholderFactory(agency=agency))
    rival = ClientFactory(agency=other_agency)

    moved = both.put(
        f"/v1/policies/{policy.id}",
        _whole(both, f"/v1/policies/{policy.id}", clientId=rival.id),
        format="json",
    )
    assert moved.status_code == 200, moved.content
    assert (moved.json()["clientId"], moved.json()["producerId"]) == (rival.id, None)

    moved = both.put(
        f"/v1/vehicles/{unit.id}",
        {"clientId": rival.id, "lienholderId": unit.lienholder_id},
        format="json",
    )
    assert moved.status_code == 200, moved.content
    assert moved.json()["lienholder"] is None

    moved = both.put(
        f"/v1/clients/{carrier.id}",
        {"agencyId": other_agency.id, "producerId": carrier.producer_id},
        format="json",
    )
    assert moved.status_code == 200, moved.content
    assert (moved.json()["agencyId"], moved.json()["producerId"]) == (other_agency.id, None)
    # A producer of the old agency sent as a change is still refused.
    other = ClientFactory(agency=agency)
    refused = both.put(
        f"/v1/clients/{other.id}",
        {"agencyId": other_agency.id, "producerId": ProducerFactory(agency=agency).id},
        format="json",
    )
    assert field_errors(assert_problem(refused, 400)) == {
        "producerId": "No producer with this id in the client's agency."
    }


def test_the_admin_moves_a_client_with_its_producer_left_behind(
    client, groups, agency, other_agency, carrier
):
    staff = staff_member([agency, other_agency], groups, username="both-staff")
    client.force_login(staff)
    carrier.producer = ProducerFactory(agency=agency)
    carrier.save()
    url = f"/admin/clients/client/{carrier.pk}/change/"
    data = form_data(client.get(url).content.decode(), agency=other_agency.pk)
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    carrier.refresh_from_db()
    assert (carrier.agency_id, carrier.producer_id) == (other_agency.id, None)


def _refused_move(both, client, agency) -> tuple[dict, int]:
    """The move's problem body and how many SQL statements answered it."""
    with CaptureQueriesContext(connection) as queries:
        response = both.put(f"/v1/clients/{client.id}", {"agencyId": agency.id}, format="json")
    return assert_problem(response, 409), len(queries)


def test_a_policy_number_live_in_the_new_agency_refuses_the_move_naming_it(
    both, api, agency, other_agency, carrier, rival
):
    """Contract section 13: a policy number is unique per insurer among the live policies of one
    agency. The move is refused as a DOT clash is (409, the rule's message), naming the number,
    with one statement however many policies the client has."""
    PolicyFactory(client=carrier, policy_number="NL-2")
    PolicyFactory(client=rival, policy_number="NL-2")  # the same insurer, live
    PolicyFactory(client=rival, policy_number="NL-1", deleted=True)  # deleted: no clash
    PolicyFactory(client=carrier, policy_number="NL-1")
    refused, _ = _refused_move(both, carrier, other_agency)
    assert refused["detail"] == (
        "The client's policy NL-2 (Great West Casualty Company) cannot move: a live policy "
        "with this number and insurer exists in that agency."
    )
    assert refused["errors"] == []  # as the DOT clash's 409
    assert api.get(f"/v1/clients/{carrier.id}").json()["agencyId"] == agency.id

    statements = _refused_move(both, carrier, other_agency)[1]  # the caller's key cached
    for n in range(20):
        PolicyFactory(client=carrier, policy_number=f"MORE-{n}")
    assert _refused_move(both, carrier, other_agency)[1] == statements


def test_a_policy_number_of_another_insurer_or_a_deleted_policy_does_not_refuse_the_move(
    both, other_api, other_agency, carrier, rival
):
    elsewhere = Insurer.objects.create(name="Elsewhere Mutual", name_key="elsewhere mutual")
    PolicyFactory(client=carrier, policy_number="NL-3")
    PolicyFactory(client=rival, policy_number="NL-3", insurer=elsewhere)
    PolicyFactory(client=carrier, policy_number="NL-4", deleted=True)
    PolicyFactory(client=rival, policy_number="NL-4")

    moved = both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json")
    assert moved.status_code == 200, moved.content
    assert other_api.get(f"/v1/clients/{carrier.id}").json()["agencyId"] == other_agency.id


def test_the_links_a_move_leaves_behind_are_audited_and_announced_to_the_agency_joined(
    both, api, other_api, agency, other_agency, carrier
):
    """The producer a policy loses and the lienholder a unit loses in the move are changes of
    theirs, as when a policy or unit moves on its own: a history version by the mover and a
    `policy.updated` / `vehicle.updated`, the record as it is now, after the client's event.
    They are the agency it joined's records now: the agency it left hears nothing of them."""
    from apps.policies.models import Policy
    from apps.vehicles.models import Vehicle

    policy = PolicyFactory(client=carrier, producer=ProducerFactory(agency=agency))
    bare_policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier, lienholder=LienholderFactory(agency=agency))
    bare_unit = VehicleFactory(client=carrier)
    records = ((Policy, policy), (Policy, bare_policy), (Vehicle, unit), (Vehicle, bare_unit))
    versions = [model.history.filter(id=r.pk).count() for model, r in records]
    seen = len(api.get("/v1/events?limit=500").json()["results"])

    moved = both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json")
    assert moved.status_code == 200, moved.content

    added = [
        model.history.filter(id=r.pk).count() - n
        for (model, r), n in zip(records, versions, strict=True)
    ]
    assert added == [1, 0, 1, 0]
    for model, record_, link in ((Policy, policy, "producer_id"), (Vehicle, unit, "lienholder_id")):
        latest = model.history.filter(id=record_.pk).latest("history_id")
        assert (getattr(latest, link), latest.agency_id) == (None, other_agency.pk)
        assert latest.history_user.username == "both"
    joined = other_api.get("/v1/events").json()["results"]
    changes = [e for e in joined if not e["type"].endswith("status_changed")]
    assert [(e["type"], e["agencyId"], e["clientId"], e["data"]["id"]) for e in changes] == [
        ("client.updated", other_agency.id, carrier.id, carrier.id),
        ("policy.updated", other_agency.id, carrier.id, policy.id),
        ("vehicle.updated", other_agency.id, carrier.id, unit.id),
    ]
    assert (changes[1]["data"]["producerId"], changes[1]["data"]["agencyId"]) == (
        None,
        other_agency.id,
    )
    assert (changes[2]["data"]["lienholderId"], changes[2]["data"]["updatedBy"]) == (None, "both")
    assert joined.index(changes[-1]) < min(
        joined.index(e) for e in joined if e["type"].endswith("status_changed")
    )
    left = api.get("/v1/events?limit=500").json()["results"][seen:]
    assert not [e for e in left if e["type"] in ("policy.updated", "vehicle.updated")]
    assert [e["type"] for e in left if not e["type"].endswith("status_changed")] == [
        "client.deleted"
    ]


def test_a_moves_statements_do_not_grow_with_the_policies_and_units_it_unlinks(
    both, agency, other_agency
):
    def move_of(records: int) -> int:
        carrier = ClientFactory(agency=agency)
        for _ in range(records):
            PolicyFactory(client=carrier, producer=ProducerFactory(agency=agency))
            VehicleFactory(client=carrier, lienholder=LienholderFactory(agency=agency))
        with CaptureQueriesContext(connection) as queries:
            moved = both.put(
                f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json"
            )
        assert moved.status_code == 200, moved.content
        return len(queries.captured_queries)

    move_of(1)  # the caller's key and permissions remembered
    assert move_of(6) == move_of(1)
