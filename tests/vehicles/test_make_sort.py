"""`sort=make` orders by the make's name copied onto the vehicle (issue 18): the same order the
join to the makes gave, in both directions and on every page (the last ones read backwards);
the copy follows the make whoever writes the vehicle, and a renamed make's vehicles follow it,
whoever renames it (the admin here)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.masterdata.models import Make
from apps.vehicles.models import Vehicle
from tests.admin.formdata import form_data
from tests.conftest import assert_problem, ids_statement, page_ids
from tests.factories import (
    ClientFactory,
    PolicyFactory,
    UserFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


def joined_order(agency, sort: str) -> list[int]:
    terms = [
        ("-" if part.startswith("-") else "")
        + {"make": "make__name", "id": "id", "unit": "unit"}[part.lstrip("-")]
        for part in sort.split(",")
    ]
    terms += [] if any(term.lstrip("-") == "id" for term in terms) else ["id"]
    return list(
        Vehicle.objects.filter(agency=agency, deleted=False)
        .order_by(*terms)
        .values_list("pk", flat=True)
    )


@pytest.fixture
def makes(db):
    return {
        name: Make.objects.get_or_create(name=name)[0] for name in ("Mack", "Volvo", "Peterbilt")
    }


@pytest.fixture
def vehicles(agency, other_agency, makes):
    client = ClientFactory(agency=agency)
    made = [
        VehicleFactory(client=client, make=makes[name])
        for name in ("Volvo", "Mack", "Peterbilt", "Volvo", "Mack", "Volvo", "Peterbilt")
    ]
    VehicleFactory(client=ClientFactory(agency=other_agency), make=makes["Mack"])
    return made


@pytest.mark.parametrize("sort", ["make", "-make", "-make,-id", "make,-unit"])
def test_the_order_is_the_one_the_join_to_the_makes_gave(
    api, agency, vehicles, sort, django_assert_max_num_queries
):
    joined = joined_order(agency, sort)
    assert len(joined) == 7
    assert page_ids(api.get(f"/v1/vehicles?sort={sort}&limit=100")) == joined
    paged = []
    for page in (1, 2, 3, 4):  # pages 3 and 4 are read backwards
        with django_assert_max_num_queries(9):
            paged += page_ids(api.get(f"/v1/vehicles?sort={sort}&limit=2&page={page}"))
    assert paged == joined


def test_the_sort_reads_the_copy_not_the_makes(api, vehicles, django_assert_max_num_queries):
    with django_assert_max_num_queries(9) as queries:
        api.get("/v1/vehicles?sort=make&limit=2")
    ids = ids_statement(queries, "vehicles_vehicle")
    assert '"vehicles_vehicle"."make_name" ASC' in ids
    assert "masterdata_make" not in ids


def test_the_copy_follows_the_make_whoever_writes_the_vehicle(api, agency, vehicles, makes):
    volvo = vehicles[0]
    assert Vehicle.objects.get(pk=volvo.pk).make_name == "Volvo"
    # The API: a vehicle moved to another make.
    response = api.put(f"/v1/vehicles/{volvo.pk}", {"makeId": makes["Mack"].pk}, format="json")
    assert response.status_code == 200, response.content
    assert Vehicle.objects.get(pk=volvo.pk).make_name == "Mack"
    assert page_ids(api.get("/v1/vehicles?sort=make&limit=100")) == joined_order(agency, "make")
    # A raw ORM write, with only the key named.
    volvo.make_id = makes["Peterbilt"].pk
    volvo.save(update_fields=["make"])
    assert Vehicle.objects.get(pk=volvo.pk).make_name == "Peterbilt"
    # bulk_create skips save(): its own copy.
    built = VehicleFactory.build(client=volvo.client, make=makes["Volvo"])
    (created,) = Vehicle.objects.bulk_create([built])
    assert Vehicle.objects.get(pk=created.pk).make_name == "Volvo"


def test_saving_a_vehicle_loaded_without_its_make_reads_no_make(vehicles, makes):
    vehicle = Vehicle.objects.get(pk=vehicles[1].pk)
    vehicle.owner = "Renamed owner"
    with CaptureQueriesContext(connection) as queries:
        vehicle.save()
    assert not [q for q in queries if "masterdata_make" in q["sql"]], queries.captured_queries
    # Loaded without the copy at all: nothing read, the copy kept.
    vehicle = Vehicle.objects.only("id", "owner", "make").get(pk=vehicles[1].pk)
    vehicle.owner = "Again"
    with CaptureQueriesContext(connection) as queries:
        vehicle.save(update_fields=["owner"])
    read = [q["sql"] for q in queries if q["sql"].startswith("SELECT")]
    assert not [sql for sql in read if "make_name" in sql or "masterdata_make" in sql], read
    assert Vehicle.objects.get(pk=vehicles[1].pk).make_name == "Mack"
    # A new make is read, and the copy follows it.
    vehicle.make_id = makes["Volvo"].pk
    vehicle.save(update_fields=["make"])
    assert Vehicle.objects.get(pk=vehicles[1].pk).make_name == "Volvo"


def test_a_make_renamed_in_the_admin_moves_its_vehicles(client, api, agency, vehicles, makes):
    before = page_ids(api.get("/v1/vehicles?sort=make&limit=100"))
    root = UserFactory(username="root-make-sort", is_staff=True, is_superuser=True)
    client.force_login(root)
    url = f"/admin/masterdata/make/{makes['Mack'].pk}/change/"
    data = form_data(client.get(url).content.decode(), name="Zenith Motor Works")
    assert client.post(url, data).status_code == 302
    assert set(Vehicle.objects.filter(make=makes["Mack"]).values_list("make_name", flat=True)) == {
        "Zenith Motor Works"
    }  # the other agency's Mack too
    after = page_ids(api.get("/v1/vehicles?sort=make&limit=100"))
    assert after == joined_order(agency, "make") != before
    assert after[-2:] == [vehicles[1].pk, vehicles[4].pk]  # Mack was first, Zenith Motor Works last
    # The copy is not the vehicle's data: no history row, no new updated_at.
    vehicle = Vehicle.objects.get(pk=vehicles[1].pk)
    assert vehicle.history.count() == 1
    assert vehicle.updated_at == vehicles[1].updated_at


def test_update_bulk_update_and_update_fields_keep_the_copy_with_the_key(vehicles, makes):
    from django.db.models import F

    first, second = vehicles[0], vehicles[1]
    # update(): by the make, by its id, by another column naming a make.
    Vehicle.objects.filter(pk=first.pk).update(make=makes["Mack"])
    assert Vehicle.objects.get(pk=first.pk).make_name == "Mack"
    Vehicle.objects.filter(pk=first.pk).update(make_id=makes["Peterbilt"].pk)
    assert Vehicle.objects.get(pk=first.pk).make_name == "Peterbilt"
    Vehicle.objects.filter(pk=first.pk).update(make=F("make"))
    assert Vehicle.objects.get(pk=first.pk).make_name == "Peterbilt"
    # bulk_update naming the key.
    first.make, second.make = makes["Volvo"], makes["Volvo"]
    Vehicle.objects.bulk_update([first, second], ["make"])
    assert set(
        Vehicle.objects.filter(pk__in=[first.pk, second.pk]).values_list("make_name", flat=True)
    ) == {"Volvo"}
    # A save whose update_fields leave the key out writes neither the key nor its copy, and a
    # later save of the key still follows it.
    vehicle = Vehicle.objects.get(pk=first.pk)
    vehicle.make = makes["Mack"]
    vehicle.owner = "Only the owner"
    vehicle.save(update_fields=["owner"])
    stored = Vehicle.objects.get(pk=first.pk)
    assert (stored.make_id, stored.make_name) == (makes["Volvo"].pk, "Volvo")
    vehicle.save(update_fields=["make"])
    stored = Vehicle.objects.get(pk=first.pk)
    assert (stored.make_id, stored.make_name) == (makes["Mack"].pk, "Mack")


def test_the_admin_sorts_its_year_and_make_column_by_the_copy(staff_client, vehicles, makes):
    from html import unescape

    # year_make is the 4th column: `o=4` sorts by it, `o=-4` backwards.
    for order, names in (
        ("4", ["Mack", "Peterbilt", "Volvo"]),
        ("-4", ["Volvo", "Peterbilt", "Mack"]),
    ):
        response = staff_client.get(f"/admin/vehicles/vehicle/?o={order}")
        assert response.status_code == 200
        page = unescape(response.content.decode())
        seen = sorted(names, key=lambda name: page.index(f"2021 {name}"))
        assert seen == names, order


def test_a_policys_vehicles_sort_by_the_copy_too(api, other_api, vehicles, makes):
    policy = PolicyFactory(client=vehicles[0].client)
    for vehicle in vehicles:
        VehicleCoverageFactory(vehicle=vehicle, policy=policy)
    # A rename moves the policy's units too (the copy, not a join, orders them).
    volvo = Make.objects.get(pk=makes["Volvo"].pk)
    volvo.name = "Ajax Motors"
    volvo.save()
    order = {"Ajax Motors": 0, "Mack": 1, "Peterbilt": 2}
    names = {v.pk: Vehicle.objects.get(pk=v.pk).make_name for v in vehicles}
    expected = sorted(names, key=lambda pk: (order[names[pk]], pk))
    path = f"/v1/policies/{policy.id}/vehicles"
    assert page_ids(api.get(f"{path}?sort=make&limit=100")) == expected
    backwards = sorted(names, key=lambda pk: (-order[names[pk]], pk))  # ties still by id
    assert page_ids(api.get(f"{path}?sort=-make&limit=100")) == backwards
    assert_problem(other_api.get(f"{path}?sort=make"), 404)  # another agency's policy
    assert_problem(api.get(f"{path}?sort=makeName"), 400)  # not a sortable field
