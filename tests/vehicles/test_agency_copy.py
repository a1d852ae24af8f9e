"""A vehicle's copy of its client's agency (issue 18): the one path agency scoping takes for
vehicles and the first column of the agency-wide list's sort indexes, so it must follow the
client whoever writes: the API, a model save, bulk_create, a client that moves."""

from __future__ import annotations

import pytest

from apps.vehicles.api.views import VEHICLE_SORT_FIELDS
from apps.vehicles.models import Vehicle
from tests.factories import ClientFactory, UserFactory, VehicleFactory

pytestmark = pytest.mark.django_db


def test_a_vehicle_created_over_http_carries_its_clients_agency(api, other_api, carrier):
    response = api.post(
        "/v1/vehicles",
        {
            "clientId": carrier.id,
            "unit": "7",
            "unitTypeName": "Tractor",
            "modelYear": 2022,
            "makeCompanyName": "Kenworth",
            "serialNumber": "1XKYDP9X5MJ000777",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    vehicle = Vehicle.objects.get(pk=response.json()["id"])
    assert vehicle.agency_id == carrier.agency_id
    assert other_api.get(f"/v1/vehicles/{vehicle.pk}").status_code == 404
    assert other_api.get("/v1/vehicles").json()["count"] == 0


def test_a_vehicle_moved_to_a_client_of_another_agency_follows_it(
    make_api, groups, agency, other_agency, carrier, rival, other_api
):
    both = UserFactory(agencies=[agency, other_agency], groups=[groups[0]])
    vehicle = VehicleFactory(client=carrier)
    assert other_api.get(f"/v1/vehicles/{vehicle.pk}").status_code == 404
    response = make_api(both).put(
        f"/v1/vehicles/{vehicle.pk}", {"clientId": rival.pk}, format="json"
    )
    assert response.status_code == 200, response.content
    vehicle.refresh_from_db()
    assert vehicle.agency_id == other_agency.pk
    assert other_api.get(f"/v1/vehicles/{vehicle.pk}").status_code == 200
    assert [row["id"] for row in other_api.get("/v1/vehicles").json()["results"]] == [vehicle.pk]


@pytest.mark.parametrize("update_fields", [None, ["agency"], ["agency_id", "client_name"]])
def test_a_client_that_moves_takes_its_vehicles(carrier, other_agency, other_api, update_fields):
    vehicle = VehicleFactory(client=carrier)
    carrier.agency = other_agency
    carrier.save(update_fields=update_fields)
    vehicle.refresh_from_db()
    assert vehicle.agency_id == other_agency.pk
    assert other_api.get(f"/v1/vehicles/{vehicle.pk}").status_code == 200


def test_a_model_save_and_bulk_create_copy_the_agency(carrier, rival):
    saved = VehicleFactory(client=carrier)
    assert saved.agency_id == carrier.agency_id
    saved.client_id = rival.pk  # the cached client is dropped with its id
    saved.save(update_fields=["client"])
    assert Vehicle.objects.get(pk=saved.pk).agency_id == rival.agency_id
    built = VehicleFactory.build(client=rival, serial_number="1XKYDP9X5MJ000001")
    built.agency_id = None
    (created,) = Vehicle.objects.bulk_create([built])
    assert Vehicle.objects.get(pk=created.pk).agency_id == rival.agency_id


@pytest.mark.parametrize("sort", [*sorted(VEHICLE_SORT_FIELDS), "id", "createdAt", "updatedAt"])
def test_every_sort_of_the_agency_wide_list_keeps_to_the_agency(
    api, other_api, agency, other_agency, sort, django_assert_max_num_queries
):
    ours = [VehicleFactory(client=ClientFactory(agency=agency)) for _ in range(3)]
    theirs = [VehicleFactory(client=ClientFactory(agency=other_agency)) for _ in range(2)]
    for caller, expected in ((api, ours), (other_api, theirs)):
        seen = []
        for page in (1, 2, 3):  # the last pages are read backwards through the index
            with django_assert_max_num_queries(9):
                body = caller.get(f"/v1/vehicles?sort={sort}&limit=1&page={page}").json()
            seen += [row["id"] for row in body["results"]]
        assert sorted(seen) == sorted(v.pk for v in expected)[: len(seen)]
        assert len(seen) == min(3, len(expected))
