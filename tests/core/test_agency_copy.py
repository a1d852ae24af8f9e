"""A driver's and a vehicle's copy of its client's agency (`ClientAgencyMixin`, issue 18): the
one path agency scoping takes for them and the first column of the agency-wide lists' sort
indexes, so it must follow the client whoever writes: the API, a model save, bulk_create, a
client that moves. The same assertions for both kinds of record."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from apps.drivers.api.views import DriverViewSet
from apps.drivers.models import Driver
from apps.vehicles.api.views import VEHICLE_SORT_FIELDS
from apps.vehicles.models import Vehicle
from tests.conftest import page_ids
from tests.factories import ClientFactory, DriverFactory, UserFactory, VehicleFactory

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Kind:
    """A kind of record that carries its client's agency, and how the API writes one."""

    path: str
    model: type
    factory: type
    body: dict  # a create body, without its clientId
    sorts: tuple[str, ...]


DRIVERS = Kind(
    path="/v1/drivers",
    model=Driver,
    factory=DriverFactory,
    body={"firstName": "Ana", "lastName": "Ruiz", "driverType": "Owner Operator"},
    sorts=(*sorted(DriverViewSet.sort_fields), "-lastName"),
)
VEHICLES = Kind(
    path="/v1/vehicles",
    model=Vehicle,
    factory=VehicleFactory,
    body={
        "unit": "7",
        "unitTypeName": "Tractor",
        "modelYear": 2022,
        "makeCompanyName": "Kenworth",
        "serialNumber": "1XKYDP9X5MJ000777",
    },
    sorts=(*sorted(VEHICLE_SORT_FIELDS), "-unit"),
)
KINDS = [pytest.param(DRIVERS, id="drivers"), pytest.param(VEHICLES, id="vehicles")]
SORTS = [
    pytest.param(kind, sort, id=f"{kind.path[4:]}-{sort}")
    for kind in (DRIVERS, VEHICLES)
    for sort in (*kind.sorts, "id", "createdAt", "updatedAt", "-updatedAt")
]


@pytest.mark.parametrize("kind", KINDS)
def test_a_record_created_over_http_carries_its_clients_agency(kind, api, other_api, carrier):
    response = api.post(kind.path, {"clientId": carrier.id, **kind.body}, format="json")
    assert response.status_code == 201, response.content
    record = kind.model.objects.get(pk=response.json()["id"])
    assert record.agency_id == carrier.agency_id
    assert other_api.get(f"{kind.path}/{record.pk}").status_code == 404
    assert other_api.get(kind.path).json()["count"] == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_record_moved_to_a_client_of_another_agency_follows_it(
    kind, make_api, groups, agency, other_agency, carrier, rival, other_api
):
    both = UserFactory(agencies=[agency, other_agency], groups=[groups[0]])
    record = kind.factory(client=carrier)
    assert other_api.get(f"{kind.path}/{record.pk}").status_code == 404
    response = make_api(both).put(f"{kind.path}/{record.pk}", {"clientId": rival.pk}, format="json")
    assert response.status_code == 200, response.content
    record.refresh_from_db()
    assert record.agency_id == other_agency.pk
    assert other_api.get(f"{kind.path}/{record.pk}").status_code == 200
    assert page_ids(other_api.get(kind.path)) == [record.pk]


@pytest.mark.parametrize("kind", KINDS)
def test_a_client_moved_over_http_takes_its_records(
    kind, make_api, groups, agency, other_agency, carrier, api, other_api
):
    both = UserFactory(agencies=[agency, other_agency], groups=[groups[0]])
    records = [kind.factory(client=carrier) for _ in range(2)]
    assert sorted(page_ids(api.get(kind.path))) == sorted(r.pk for r in records)
    response = make_api(both).put(
        f"/v1/clients/{carrier.pk}", {"agencyId": other_agency.pk}, format="json"
    )
    assert response.status_code == 200, response.content
    assert api.get(kind.path).json()["count"] == 0
    assert api.get(f"{kind.path}/{records[0].pk}").status_code == 404
    assert sorted(page_ids(other_api.get(f"{kind.path}?sort={kind.sorts[0]}"))) == sorted(
        r.pk for r in records
    )
    assert other_api.get(f"{kind.path}/{records[0].pk}").status_code == 200


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("update_fields", [None, ["agency"], ["agency_id", "client_name"]])
def test_a_client_that_moves_takes_its_records(
    kind, carrier, other_agency, other_api, update_fields
):
    record = kind.factory(client=carrier)
    carrier.agency = other_agency
    carrier.save(update_fields=update_fields)
    record.refresh_from_db()
    assert record.agency_id == other_agency.pk
    assert other_api.get(f"{kind.path}/{record.pk}").status_code == 200


@pytest.mark.parametrize("kind", KINDS)
def test_a_model_save_and_bulk_create_copy_the_agency(kind, carrier, rival):
    saved = kind.factory(client=carrier)
    assert saved.agency_id == carrier.agency_id
    assert saved.history.latest().agency_id == carrier.agency_id
    saved.client_id = rival.pk  # the cached client is dropped with its id
    saved.save(update_fields=["client"])
    assert kind.model.objects.get(pk=saved.pk).agency_id == rival.agency_id
    built = kind.factory.build(client=rival)
    built.agency_id = None
    (created,) = kind.model.objects.bulk_create([built])
    assert kind.model.objects.get(pk=created.pk).agency_id == rival.agency_id


@pytest.mark.parametrize(("kind", "sort"), SORTS)
def test_every_sort_of_the_agency_wide_list_keeps_to_the_agency(
    kind, sort, api, other_api, agency, other_agency, django_assert_max_num_queries
):
    ours = [kind.factory(client=ClientFactory(agency=agency)) for _ in range(3)]
    theirs = [kind.factory(client=ClientFactory(agency=other_agency)) for _ in range(2)]
    for caller, expected in ((api, ours), (other_api, theirs)):
        seen = []
        for page in (1, 2, 3):  # the last pages are read backwards through the index
            with django_assert_max_num_queries(9):
                seen += page_ids(caller.get(f"{kind.path}?sort={sort}&limit=1&page={page}"))
        assert sorted(seen) == sorted(r.pk for r in expected)


@pytest.mark.parametrize("kind", KINDS)
def test_the_lists_query_count_does_not_grow_with_the_agency(
    kind, api, other_api, agency, other_agency, django_assert_max_num_queries
):
    for _ in range(12):
        kind.factory(client=ClientFactory(agency=agency))
    kind.factory(client=ClientFactory(agency=other_agency))
    counted = []
    for caller in (api, other_api):
        caller.get(kind.path)  # warm: the caller's permissions
        with django_assert_max_num_queries(9) as queries:
            assert caller.get(f"{kind.path}?limit=200").status_code == 200
        counted.append(len(queries.captured_queries))
    assert counted[0] == counted[1]
