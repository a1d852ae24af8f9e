"""A write by a user of the old agency that waits on a record's lock while a user of both
agencies moves its client to the other agency: when the move commits, the record is no longer
the caller's, and the write answers 404 and changes nothing. Before, the service locked and
read the record again without the caller's scope, saved the other agency's record with this
caller's change, and answered 500 (the view could not show what it had saved).

PostgreSQL (CI's second pass): each thread has its own connection and the database
arbitrates, as between two server processes; SQLite serialises writers instead."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from apps.clients.models import Client
from apps.clients.services import client_update
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle
from tests.conftest import CONCURRENT_WRITERS
from tests.factories import ClientFactory, PolicyFactory, UserFactory, VehicleFactory

pytestmark = CONCURRENT_WRITERS


@pytest.mark.parametrize(
    ("path", "change", "model", "field"),
    [
        ("clients", {"phone": "555-0199"}, Client, "phone"),
        ("policies", {"description": "changed meanwhile"}, Policy, "description"),
        ("vehicles", {"owner": "changed meanwhile"}, Vehicle, "owner"),
    ],
)
def test_a_write_waiting_on_a_moving_client_answers_404(
    make_api, manager, groups, agency, other_agency, master_data_back, path, change, model, field
):
    both = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    carrier = ClientFactory(agency=agency)
    records = {
        "clients": carrier,
        "policies": PolicyFactory(client=carrier),
        "vehicles": VehicleFactory(client=carrier),
    }
    record = records[path]
    before = getattr(model.objects.get(pk=record.pk), field)
    answers: list = []

    def write():
        answers.append(make_api(manager).put(f"/v1/{path}/{record.pk}", change, format="json"))
        connection.close()

    with transaction.atomic():
        client_update(user=both, instance=carrier, agency_id=other_agency.id)
        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(1.0)  # the write has found the record and waits for its lock
    writer.join(30)

    [answer] = answers
    assert answer.status_code == 404, answer.content
    assert answer["Content-Type"].startswith("application/problem+json")
    moved = model.objects.get(pk=record.pk)
    assert (getattr(moved, field), moved.updated_by_id) != (change[field], manager.id)
    assert getattr(moved, field) == before


@pytest.mark.parametrize("path", ["policies", "vehicles", "drivers"])
def test_a_record_created_on_a_client_being_deleted_is_refused(
    master_data_back, make_api, manager, agency, path
):
    # The client's row is locked by the write that names it: the creation waits for the
    # deletion and finds the client deleted, as it does one after the other (400).
    carrier = ClientFactory(agency=agency)
    bodies = {
        "policies": {
            "clientId": carrier.id,
            "effectiveDate": "2026-01-01",
            "expirationDate": "2027-01-01",
            "coverageType": "AL",
        },
        "vehicles": {
            "clientId": carrier.id,
            "unit": "9",
            "unitType": "Tractor",
            "modelYear": 2021,
            "makes": "Kenworth",
            "serialNumber": "1XKYDP9X5MJ999999",
        },
        "drivers": {
            "clientId": carrier.id,
            "firstName": "Ann",
            "lastName": "Lee",
            "driverType": "Company Driver",
        },
    }
    answers: list = []

    def create():
        answers.append(make_api(manager).post(f"/v1/{path}", bodies[path], format="json"))
        connection.close()

    with transaction.atomic():
        client_update(user=manager, instance=carrier, deleted=True)
        writer = threading.Thread(target=create)
        writer.start()
        time.sleep(1.0)
    writer.join(30)

    [answer] = answers
    assert answer.status_code == 400, answer.content
    assert answer.json()["errors"][0]["field"] == "clientId"


def test_a_client_moving_while_its_unit_is_scheduled_does_not_deadlock(
    master_data_back, make_api, manager, groups, agency, other_agency, monkeypatch
):
    # A move locks the client, its policies, then its units; a scheduling locks the policy,
    # then the unit. It locked the unit first: each waited for the other's row, and
    # PostgreSQL rolled one back (a 503). Here the scheduling holds its first rows a while.
    from apps.coverages import services

    both = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    carrier = ClientFactory(agency=agency)
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    real = services._visible

    def slow(user, model, pk, field):
        found = real(user, model, pk, field)
        if model is Vehicle:
            time.sleep(1.5)  # the move starts meanwhile
        return found

    monkeypatch.setattr(services, "_visible", slow)
    answers: list = []

    def schedule():
        body = {
            "vehicleId": unit.id,
            "policyId": policy.id,
            "policyAddedDate": str(policy.effective_date),
        }
        answers.append(make_api(manager).post("/v1/vehicles/coverages", body, format="json"))
        connection.close()

    scheduler = threading.Thread(target=schedule)
    scheduler.start()
    time.sleep(0.5)
    client_update(user=both, instance=carrier, agency_id=other_agency.id)
    scheduler.join(30)

    [answer] = answers
    assert answer.status_code == 201, answer.content
    assert Vehicle.objects.get(pk=unit.pk).agency_id == other_agency.id
