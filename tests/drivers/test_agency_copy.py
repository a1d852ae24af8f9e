"""A driver's copy of its client's agency (issue 18): the one path agency scoping takes for
drivers and the first column of the agency-wide list's sort indexes, so it must follow the
client whoever writes: the API, a model save, bulk_create, a client that moves."""

from __future__ import annotations

import pytest

from apps.drivers.api.views import DriverViewSet
from apps.drivers.models import Driver
from tests.factories import ClientFactory, DriverFactory, UserFactory

pytestmark = pytest.mark.django_db


def ids_of(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_a_driver_created_over_http_carries_its_clients_agency(api, other_api, carrier):
    response = api.post(
        "/v1/drivers",
        {
            "clientId": carrier.id,
            "firstName": "Ana",
            "lastName": "Ruiz",
            "driverType": "Owner Operator",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    driver = Driver.objects.get(pk=response.json()["id"])
    assert driver.agency_id == carrier.agency_id
    assert other_api.get(f"/v1/drivers/{driver.pk}").status_code == 404
    assert other_api.get("/v1/drivers").json()["count"] == 0


def test_a_driver_moved_to_a_client_of_another_agency_follows_it(
    make_api, groups, agency, other_agency, carrier, rival, other_api
):
    both = UserFactory(agencies=[agency, other_agency], groups=[groups[0]])
    driver = DriverFactory(client=carrier)
    assert other_api.get(f"/v1/drivers/{driver.pk}").status_code == 404
    response = make_api(both).put(f"/v1/drivers/{driver.pk}", {"clientId": rival.pk}, format="json")
    assert response.status_code == 200, response.content
    driver.refresh_from_db()
    assert driver.agency_id == other_agency.pk
    assert other_api.get(f"/v1/drivers/{driver.pk}").status_code == 200
    assert ids_of(other_api.get("/v1/drivers")) == [driver.pk]


def test_a_client_moved_over_http_takes_its_drivers(
    make_api, groups, agency, other_agency, carrier, api, other_api
):
    both = UserFactory(agencies=[agency, other_agency], groups=[groups[0]])
    drivers = [DriverFactory(client=carrier) for _ in range(2)]
    assert sorted(ids_of(api.get("/v1/drivers"))) == sorted(d.pk for d in drivers)
    response = make_api(both).put(
        f"/v1/clients/{carrier.pk}", {"agencyId": other_agency.pk}, format="json"
    )
    assert response.status_code == 200, response.content
    assert api.get("/v1/drivers").json()["count"] == 0
    assert api.get(f"/v1/drivers/{drivers[0].pk}").status_code == 404
    assert sorted(ids_of(other_api.get("/v1/drivers?sort=lastName"))) == sorted(
        d.pk for d in drivers
    )
    assert other_api.get(f"/v1/drivers/{drivers[0].pk}").status_code == 200


@pytest.mark.parametrize("update_fields", [None, ["agency"], ["agency_id", "client_name"]])
def test_a_client_that_moves_takes_its_drivers(carrier, other_agency, other_api, update_fields):
    driver = DriverFactory(client=carrier)
    carrier.agency = other_agency
    carrier.save(update_fields=update_fields)
    driver.refresh_from_db()
    assert driver.agency_id == other_agency.pk
    assert other_api.get(f"/v1/drivers/{driver.pk}").status_code == 200


def test_a_model_save_and_bulk_create_copy_the_agency(carrier, rival):
    saved = DriverFactory(client=carrier)
    assert saved.agency_id == carrier.agency_id
    assert saved.history.latest().agency_id == carrier.agency_id
    saved.client_id = rival.pk  # the cached client is dropped with its id
    saved.save(update_fields=["client"])
    assert Driver.objects.get(pk=saved.pk).agency_id == rival.agency_id
    built = DriverFactory.build(client=rival)
    built.agency_id = None
    (created,) = Driver.objects.bulk_create([built])
    assert Driver.objects.get(pk=created.pk).agency_id == rival.agency_id


@pytest.mark.parametrize(
    "sort", [*sorted(DriverViewSet.sort_fields), "-lastName", "id", "createdAt", "-updatedAt"]
)
def test_every_sort_of_the_agency_wide_list_keeps_to_the_agency(
    api, other_api, agency, other_agency, sort, django_assert_max_num_queries
):
    ours = [DriverFactory(client=ClientFactory(agency=agency)) for _ in range(3)]
    theirs = [DriverFactory(client=ClientFactory(agency=other_agency)) for _ in range(2)]
    for caller, expected in ((api, ours), (other_api, theirs)):
        seen = []
        for page in (1, 2, 3):  # the last pages are read backwards through the index
            with django_assert_max_num_queries(9):
                seen += ids_of(caller.get(f"/v1/drivers?sort={sort}&limit=1&page={page}"))
        assert sorted(seen) == sorted(d.pk for d in expected)


def test_the_lists_query_count_does_not_grow_with_the_agency(
    api, other_api, agency, other_agency, django_assert_max_num_queries
):
    for _ in range(12):
        DriverFactory(client=ClientFactory(agency=agency))
    DriverFactory(client=ClientFactory(agency=other_agency))
    counted = []
    for caller in (api, other_api):
        caller.get("/v1/drivers")  # warm: the caller's permissions
        with django_assert_max_num_queries(9) as queries:
            assert caller.get("/v1/drivers?limit=200").status_code == 200
        counted.append(len(queries.captured_queries))
    assert counted[0] == counted[1]
