"""A caller of several agencies pages through their records in the list's order, every page the
same as one statement over all of them would give (issue 18). On PostgreSQL a page near either
end is read one agency at a time (each agency's ids through its (agency, column, id) index, then
their union in the list's order: apps.core.pagination); on SQLite, which cannot order the parts
of a UNION, at once. The same answers, the same number of statements."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.core import pagination
from apps.drivers.models import Driver
from apps.masterdata.models import Make, State
from apps.vehicles.models import Vehicle
from tests.conftest import ids_statement, page_ids
from tests.factories import ClientFactory, DriverFactory, UserFactory, VehicleFactory

pytestmark = pytest.mark.django_db

VEHICLE_SORTS = {
    "unit": "unit",
    "make": "make_name",
    "owner": "owner",
    "statedValue": "stated_value",
    "clientId": "client_id",
    "modelYear": "model_year",
    "createdAt": "created_at",
}
DRIVER_SORTS = {"licenseState": "license_state_code", "hireDate": "hire_date", "id": "id"}


@pytest.fixture
def broker(groups, agency, other_agency):
    return UserFactory(username="broker", agencies=[agency, other_agency], groups=[groups[0]])


@pytest.fixture
def fleets(agency, other_agency):
    clients = {
        a: [ClientFactory(agency=a), ClientFactory(agency=a)] for a in (agency, other_agency)
    }
    makes = [Make.objects.get_or_create(name=name)[0] for name in ("Volvo", "Mack", "Isuzu")]
    owners = ["", "Zed Leasing", "Acme Leasing"]
    for n, owning in enumerate([agency, other_agency] * 7 + [agency] * 3):
        VehicleFactory(
            client=clients[owning][n % 2],
            unit=f"{n % 5}",
            make=makes[n % 3],
            owner=owners[n % 3],
            stated_value=None if n % 6 == 0 else 1000 * (n % 4),
            model_year=2015 + n % 3,
        )
    states = [None, State.objects.get(code="TX"), State.objects.get(code="CA")]
    for n, owning in enumerate([other_agency, agency] * 5):
        DriverFactory(client=clients[owning][n % 2], license_state=states[n % 3])


def expected(model, agencies, sort: str, fields: dict[str, str]) -> list[int]:
    terms = []
    for part in sort.split(","):
        name = fields[part.lstrip("-")]
        terms.append(("-" if part.startswith("-") else "") + name)
    if not any(term.lstrip("-") == "id" for term in terms):
        terms.append("id")
    rows = model.objects.filter(agency__in=agencies)
    rows = rows.filter(deleted=False) if model is Vehicle else rows
    return list(rows.order_by(*terms).values_list("pk", flat=True))


@pytest.mark.parametrize("sort", [*VEHICLE_SORTS, "-make", "-statedValue", "owner,-unit"])
def test_every_vehicle_page_is_the_one_a_single_statement_gives(
    make_api, broker, agency, other_agency, fleets, sort, django_assert_max_num_queries
):
    api = make_api(broker)
    whole = expected(Vehicle, [agency, other_agency], sort, VEHICLE_SORTS)
    assert len(whole) == 17
    assert page_ids(api.get(f"/v1/vehicles?sort={sort}&limit=100")) == whole
    paged = []
    for page in range(1, 8):  # 3 per page: pages 4 to 6 are read backwards, 6 is short
        with django_assert_max_num_queries(9):
            paged += page_ids(api.get(f"/v1/vehicles?sort={sort}&limit=3&page={page}"))
    assert paged == whole


@pytest.mark.parametrize("sort", ["licenseState", "-licenseState", "hireDate", "-id"])
def test_every_driver_page_is_the_one_a_single_statement_gives(
    make_api, broker, agency, other_agency, fleets, sort
):
    api = make_api(broker)
    whole = expected(Driver, [agency, other_agency], sort, DRIVER_SORTS)
    assert len(whole) == 10
    paged = []
    for page in range(1, 5):
        paged += page_ids(api.get(f"/v1/drivers?sort={sort}&limit=3&page={page}"))
    assert paged == whole


def test_a_page_of_several_agencies_is_read_per_agency_where_the_database_can(
    make_api, broker, manager, fleets, django_assert_max_num_queries
):
    with django_assert_max_num_queries(9) as alone:
        page_ids(make_api(manager).get("/v1/vehicles?sort=make&limit=3"))
    with django_assert_max_num_queries(9) as queries:
        page_ids(make_api(broker).get("/v1/vehicles?sort=make&limit=3"))
    assert len(queries) == len(alone)
    ids = ids_statement(queries, "vehicles_vehicle")
    if connection.features.supports_slicing_ordering_in_compound:
        assert ids.count("UNION ALL") == 1, ids
        assert ids.count('"vehicles_vehicle"."agency_id" = ') == 2, ids
    else:
        assert "UNION" not in ids


def test_a_caller_of_one_agency_and_a_deep_page_are_read_at_once(
    make_api, manager, broker, fleets, monkeypatch, django_assert_max_num_queries
):
    monkeypatch.setattr(pagination, "PER_AGENCY_ROWS", 8)  # two agencies, 3 rows each: 6
    for user, path in (
        (manager, "/v1/vehicles?sort=make&limit=3"),
        (broker, "/v1/vehicles?sort=make&limit=3&page=2"),  # 6 ids from each agency: too deep
    ):
        with django_assert_max_num_queries(9) as queries:
            page_ids(make_api(user).get(path))
        assert not [q for q in queries.captured_queries if "UNION" in q["sql"]], user


def test_a_queryset_whose_agencies_no_longer_bound_it_pages_at_once(agency, other_agency, fleets):
    from apps.agencies.models import Agency

    third = Agency.objects.create(name="Third Agency")
    VehicleFactory(client=ClientFactory(agency=third), unit="0")
    scoped = Vehicle.objects.for_agencies([agency.pk, other_agency.pk]).live()
    cases = [
        scoped | Vehicle.objects.filter(agency=third),  # OR: the third agency's rows too
        Vehicle.objects.for_agencies([agency.pk, agency.pk]),  # one agency, named twice
        scoped.none(),
    ]
    for queryset in cases:
        ordered = queryset.order_by("unit", "id")
        whole = list(ordered.values_list("pk", flat=True))
        total = len(whole)
        paged = []
        for offset in range(0, total, 4):
            paged += [row.pk for row in pagination.page_rows(ordered, offset, 4, total)]
        assert paged == whole
    assert len(list(cases[0].values_list("pk", flat=True))) == 18
