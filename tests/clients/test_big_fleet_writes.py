"""A write that touches a client's whole fleet (deleting or moving the client, deleting its
policy, the calendar job on the day the policy ends) watches every unit's status with a
statement whose parameters do not grow with the fleet: SQLite refuses a statement with more
than its build's limit (999 before SQLite 3.32, 32,766 in most builds since, 250,000 in
Debian's), so a fleet past it could not be deleted or moved at all. Here the limit is lowered
to 999 and the fleet is bigger."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest
from django.db import connection

from apps.core.dates import today
from apps.coverages.calendar import calendar_run
from apps.coverages.models import VehicleCoverage
from apps.events.models import Event
from apps.vehicles.models import Vehicle
from tests.factories import PolicyFactory, UserFactory, VehicleFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's limit on parameters"),
]
FLEET = 1_200


@pytest.fixture
def limit_999():
    connection.ensure_connection()
    raw = connection.connection
    was = raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    yield
    raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, was)


def fleet(client, policy) -> list[int]:
    """FLEET units of the client, each scheduled on the policy from its first day."""
    model = VehicleFactory.build(client=client)
    units = Vehicle.objects.bulk_create(
        [
            VehicleFactory.build(
                client=client,
                unit_type=model.unit_type,
                make=model.make,
                serial_number=f"1FLT{n:013d}",
                license_plate=f"FL{n:06d}",
            )
            for n in range(FLEET)
        ]
    )
    VehicleCoverage.objects.bulk_create(
        VehicleCoverage(
            vehicle=unit,
            policy=policy,
            coverage_status=4,
            policy_added_date=policy.effective_date,
        )
        for unit in units
    )
    return [unit.pk for unit in units]


def unit_events(agency_id) -> list[tuple[str, str]]:
    return list(
        Event.objects.filter(type="vehicle.status_changed", agency_id=agency_id).values_list(
            "data__from", "data__to"
        )
    )


def test_a_client_with_a_fleet_past_the_limit_is_deleted_and_restored(api, carrier, limit_999):
    fleet(carrier, PolicyFactory(client=carrier))

    deleted = api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json")
    assert deleted.status_code == 200, deleted.content
    assert unit_events(carrier.agency_id) == [("ACTIVE", "NOT_FOUND")] * FLEET

    restored = api.put(f"/v1/clients/{carrier.id}", {"deleted": False}, format="json")
    assert restored.status_code == 200, restored.content
    assert unit_events(carrier.agency_id).count(("NOT_FOUND", "ACTIVE")) == FLEET


def test_a_client_with_a_fleet_past_the_limit_moves_to_another_agency(
    make_api, groups, agency, other_agency, carrier, limit_999
):
    both = make_api(
        UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    )
    fleet(carrier, PolicyFactory(client=carrier))

    moved = both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json")
    assert moved.status_code == 200, moved.content
    assert unit_events(agency.id) == [("ACTIVE", "NOT_FOUND")] * FLEET
    assert unit_events(other_agency.id) == [("NOT_FOUND", "ACTIVE")] * FLEET
    assert Vehicle.objects.filter(agency=other_agency).count() == FLEET


def test_a_policy_with_a_fleet_past_the_limit_is_deleted(api, carrier, limit_999):
    policy = PolicyFactory(client=carrier)
    fleet(carrier, policy)

    deleted = api.put(f"/v1/policies/{policy.id}", {"deleted": True}, format="json")
    assert deleted.status_code == 200, deleted.content
    assert unit_events(carrier.agency_id) == [("ACTIVE", "INACTIVE")] * FLEET


def test_the_calendar_announces_a_fleet_past_the_limit_on_the_day_its_policy_ends(
    carrier, limit_999
):
    ends = today() + dt.timedelta(days=3)
    fleet(carrier, PolicyFactory(client=carrier, expiration_date=ends))

    assert calendar_run(day=ends) >= FLEET
    assert unit_events(carrier.agency_id) == [("ACTIVE", "INACTIVE")] * FLEET
