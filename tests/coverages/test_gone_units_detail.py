"""A unit that verification cannot find is covered by nothing in the details either.

Verification answers 404 for a deleted vehicle and for any unit of a deleted client (contract
section 4: deleted records leave verification). The vehicle and driver details, reachable by id,
said `covered` / `verified` true for the same units (issue 18's probe, seventeenth stop).
"""

from __future__ import annotations

import pytest

from apps.coverages.models import DriverCoverage
from apps.drivers.models import DriverVehicle
from apps.masterdata.models import CoverageType
from tests.factories import DriverFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def scheduled(carrier):
    vehicle = VehicleFactory(client=carrier)
    al = PolicyFactory(client=carrier, policy_number="AL-GONE")
    VehicleCoverageFactory(vehicle=vehicle, policy=al)
    driver = DriverFactory(client=carrier)
    DriverVehicle.objects.create(driver=driver, vehicle=vehicle)
    oa = PolicyFactory(
        client=carrier, coverage_type=CoverageType.objects.get(code="OA"), policy_number="OA-GONE"
    )
    DriverCoverage.objects.create(
        driver=driver, policy=oa, coverage_status=7, policy_added_date=oa.effective_date
    )
    return vehicle, driver


def put(api, path, body):
    response = api.put(path, body, format="json")
    assert response.status_code == 200, response.content


def details(api, vehicle, driver):
    vehicle_body = api.get(f"/v1/vehicles/{vehicle.id}").json()
    driver_body = api.get(f"/v1/drivers/{driver.id}").json()
    return vehicle_body, driver_body


def test_live_units_are_covered(api, scheduled):
    vehicle_body, driver_body = details(api, *scheduled)
    assert vehicle_body["covered"] is True and vehicle_body["coverageTypes"] == ["AL"]
    assert vehicle_body["policyAssociations"][0]["covered"] is True
    assert vehicle_body["driverAssignments"][0]["verified"] is True
    assert driver_body["verified"] is True and driver_body["coverages"][0]["covered"] is True


def test_units_of_a_deleted_client_are_covered_by_nothing(api, carrier, scheduled):
    vehicle, driver = scheduled
    put(api, f"/v1/clients/{carrier.id}", {"deleted": True})
    assert api.get(f"/v1/coverages/vehicles?vin={vehicle.serial_number}").status_code == 404
    vehicle_body, driver_body = details(api, vehicle, driver)
    assert vehicle_body["covered"] is False and vehicle_body["coverageTypes"] == []
    assert vehicle_body["policyAssociations"][0]["covered"] is False
    assignment = vehicle_body["driverAssignments"][0]
    assert assignment["verified"] is False and assignment["driverCoverages"] == []
    assert driver_body["verified"] is False
    assert [c["covered"] for c in driver_body["coverages"]] == [False]
    # Restored, they are covered again: nothing was lost.
    put(api, f"/v1/clients/{carrier.id}", {"deleted": False})
    vehicle_body, driver_body = details(api, vehicle, driver)
    assert vehicle_body["covered"] is True and driver_body["verified"] is True


def test_a_deleted_vehicle_is_covered_by_nothing_and_its_drivers_keep_theirs(api, scheduled):
    vehicle, driver = scheduled
    put(api, f"/v1/vehicles/{vehicle.id}", {"deleted": True})
    assert api.get(f"/v1/coverages/vehicles?vin={vehicle.serial_number}").status_code == 404
    vehicle_body, driver_body = details(api, vehicle, driver)
    assert vehicle_body["covered"] is False
    assert vehicle_body["policyAssociations"][0]["covered"] is False
    # The driver's own OA policy still covers them: the vehicle is not theirs to lose it by.
    assert vehicle_body["driverAssignments"][0]["verified"] is True
    assert driver_body["verified"] is True


def test_the_admin_pages_say_the_same(api, staff_client, carrier, scheduled):
    vehicle, driver = scheduled

    def pages():
        driver_page = staff_client.get(f"/admin/drivers/driver/{driver.id}/change/")
        vehicle_page = staff_client.get(f"/admin/vehicles/vehicle/{vehicle.id}/change/")
        assert driver_page.status_code == vehicle_page.status_code == 200
        return driver_page.content.decode(), vehicle_page.content.decode()

    driver_page, vehicle_page = pages()
    assert "Covered today" in driver_page and "OA/DD in force" in vehicle_page
    put(api, f"/v1/clients/{carrier.id}", {"deleted": True})
    driver_page, vehicle_page = pages()
    assert "Not covered today" in driver_page and "Covered today" not in driver_page
    assert "No OA/DD" in vehicle_page and "OA/DD in force" not in vehicle_page
