"""A vehicle that moves to another client leaves nothing of its old client behind on it: one
with coverage history or drivers cannot move (a driver is its client's, and another agency's
caller would otherwise read the driver, and the driver's policies, through the vehicle)."""

from __future__ import annotations

import pytest

from apps.vehicles.models import Vehicle
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import ClientFactory, DriverFactory, UserFactory, VehicleFactory

pytestmark = pytest.mark.django_db


def test_a_vehicle_with_a_driver_cannot_move_to_another_agencys_client(
    make_api, api, other_api, groups, agency, other_agency, carrier, rival
):
    unit, driver = VehicleFactory(client=carrier), DriverFactory(client=carrier)
    linked = api.post(
        "/v1/drivers/vehicles", {"vehicleId": unit.id, "driverId": driver.id}, format="json"
    )
    assert linked.status_code == 201, linked.content
    both = make_api(
        UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    )

    refused = assert_problem(
        both.put(f"/v1/vehicles/{unit.id}", {"clientId": rival.id}, format="json"), 400
    )
    assert field_errors(refused) == {
        "clientId": "A vehicle with drivers cannot move to another client."
    }
    assert Vehicle.objects.get(pk=unit.pk).client_id == carrier.id
    assert_problem(other_api.get(f"/v1/vehicles/{unit.id}"), 404)


def test_a_vehicle_with_a_driver_cannot_move_within_the_agency_either(api, agency, carrier):
    unit, driver = VehicleFactory(client=carrier), DriverFactory(client=carrier)
    api.post("/v1/drivers/vehicles", {"vehicleId": unit.id, "driverId": driver.id}, format="json")
    other = ClientFactory(agency=agency)
    assert_problem(api.put(f"/v1/vehicles/{unit.id}", {"clientId": other.id}, format="json"), 400)

    bare = VehicleFactory(client=carrier)  # no drivers, no coverage: it moves
    moved = api.put(f"/v1/vehicles/{bare.id}", {"clientId": other.id}, format="json")
    assert moved.status_code == 200 and moved.json()["clientId"] == other.id
