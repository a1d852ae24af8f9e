"""Sort orders integrators can rely on, the same on SQLite and PostgreSQL (whatever its
collation): a DOT in numeric order (stored without leading zeros, contract section 13, so a
shorter one is a smaller one), and names ignoring case (SQLite put every lower-case name after
the capitalised ones). A caller of several agencies gets the same pages as one statement would
give, still read one agency at a time through an index on PostgreSQL."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from apps.clients.api.views import ClientViewSet
from apps.clients.models import Client
from apps.core.sorting import order_by_for, sort_fields_of
from apps.drivers.api.views import DriverViewSet
from tests.conftest import ids_statement, page_ids
from tests.documents.test_api import upload
from tests.factories import ClientFactory, DriverFactory, UserFactory

pytestmark = pytest.mark.django_db
DOTS = ["987654", "5550003", "12", "1000000", "99"]
NAMES = ["delta Freight", "alpha Haul", "Charlie Lines", "bravo Transport", "Echo Carriers"]


def names_of(response, key: str) -> list[str]:
    assert response.status_code == 200, response.content
    return [row[key] for row in response.json()["results"]]


@pytest.fixture
def clients(agency):
    return [
        ClientFactory(agency=agency, client_name=name, dot=dot)
        for name, dot in zip(NAMES, DOTS, strict=True)
    ]


def test_clients_sort_by_dot_as_numbers(api, clients):
    numeric = sorted(DOTS, key=int)
    assert names_of(api.get("/v1/clients?sort=dot"), "dot") == numeric
    assert names_of(api.get("/v1/clients?sort=-dot"), "dot") == numeric[::-1]


@pytest.mark.parametrize("sort", ["clientName", "name", None])
def test_clients_sort_by_name_ignoring_case(api, clients, sort):
    alphabetical = sorted(NAMES, key=str.lower)
    url = f"/v1/clients?sort={sort}" if sort else "/v1/clients"  # the default order: the name
    assert names_of(api.get(url), "clientName") == alphabetical
    if sort:
        descending = names_of(api.get(f"/v1/clients?sort=-{sort}"), "clientName")
        assert descending == alphabetical[::-1]


def test_drivers_sort_by_their_names_ignoring_case(api, carrier):
    for last, first in [("smith", "Zoe"), ("Jones", "amy"), ("adams", "Bob"), ("Brown", "carl")]:
        DriverFactory(client=carrier, last_name=last, first_name=first)
    by_last = ["adams", "Brown", "Jones", "smith"]
    assert names_of(api.get("/v1/drivers"), "lastName") == by_last
    assert names_of(api.get("/v1/drivers?sort=lastName"), "lastName") == by_last
    assert names_of(api.get("/v1/drivers?sort=-firstName"), "firstName") == [
        "Zoe",
        "carl",
        "Bob",
        "amy",
    ]
    searched = api.post("/v1/drivers/search", {"sortBy": "firstName"}, format="json").json()
    assert [d["firstName"] for d in searched["items"]] == ["amy", "Bob", "carl", "Zoe"]


def test_profiles_and_documents_sort_by_name_ignoring_case(api, agency, carrier):
    for name in ("zulu rules", "Alpha rules", "bravo rules"):
        created = api.post(
            "/v1/requirement-profiles",
            {"name": name, "agencyId": agency.id, "rules": [{"kind": "federal_minimum"}]},
            format="json",
        )
        assert created.status_code == 201, created.content
    names = names_of(api.get("/v1/requirement-profiles?sort=name"), "name")
    assert [n for n in names if n.endswith("rules")] == ["Alpha rules", "bravo rules", "zulu rules"]

    for name in ("b.pdf", "C.pdf", "a.pdf"):
        assert upload(api, carrier, name=name, module="clients").status_code == 201
    listed = api.get(f"/v1/documents/clients?clientId={carrier.id}&sort=fileName")
    assert names_of(listed, "fileName") == ["a.pdf", "b.pdf", "C.pdf"]


@pytest.fixture
def broker(groups, agency, other_agency):
    return UserFactory(username="broker", agencies=[agency, other_agency], groups=[groups[0]])


@pytest.mark.parametrize("sort", ["clientName", "-clientName", "dot", "-dot"])
def test_every_page_of_several_agencies_is_the_one_a_single_statement_gives(
    make_api, broker, agency, other_agency, sort
):
    for n, name in enumerate(NAMES * 2):
        ClientFactory(
            agency=(agency, other_agency)[n % 2],
            client_name=f"{name} {n}",
            dot=DOTS[n % 5] + str(n),
        )
    api = make_api(broker)
    whole = page_ids(api.get(f"/v1/clients?sort={sort}&limit=100"))
    assert len(whole) == 10
    key = (lambda c: c.client_name.lower()) if "Name" in sort else (lambda c: int(c.dot))
    clients = sorted(Client.objects.all(), key=lambda c: (key(c), c.pk))
    if sort.startswith("-"):
        clients = sorted(clients, key=key, reverse=True)  # equal keys: none here
    assert whole == [c.pk for c in clients]
    paged = []
    for page in range(1, 5):  # 3 per page: pages 3 and 4 are read backwards, 4 is short
        paged += page_ids(api.get(f"/v1/clients?sort={sort}&limit=3&page={page}"))
    assert paged == whole


def test_a_name_ordered_page_of_several_agencies_is_still_read_per_agency(
    make_api, broker, agency, other_agency, django_assert_max_num_queries
):
    for n, name in enumerate(NAMES):
        ClientFactory(agency=(agency, other_agency)[n % 2], client_name=name)
    with django_assert_max_num_queries(9) as queries:
        page_ids(make_api(broker).get("/v1/clients?limit=3"))
    ids = ids_statement(queries, "clients_client")
    if connection.features.supports_slicing_ordering_in_compound:
        assert ids.count("UNION ALL") == 1, ids
        assert ids.count('"clients_client"."agency_id" = ') == 2, ids
    else:
        assert "UNION" not in ids


POSTGRESQL = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL plans")


@POSTGRESQL
@pytest.mark.parametrize(
    ("view", "sort", "index"),
    [
        (ClientViewSet, "clientName", "clients_agency_name_ci_idx"),
        (ClientViewSet, "dot", "clients_agency_dot_number_idx"),
        (DriverViewSet, "lastName", "drivers_agency_name_ci_idx"),
        (DriverViewSet, "firstName", "drivers_agency_first_ci_idx"),
    ],
)
def test_an_agencys_page_by_name_or_dot_walks_an_index(agency, carrier, view, sort, index):
    """Page 1 of an agency's list by name or DOT reads an index in the list's order and stops
    after the page, as by name it did before names were compared ignoring case (issue 18)."""
    model = view.filterset_class._meta.model
    terms = order_by_for(sort, sort_fields_of(view), ())
    page = model.objects.filter(agency=agency)
    page = page.filter(deleted=False) if model is Client else page  # the list's default
    page = page.order_by(*terms).values("pk")[:25]
    sql, params = page.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {model._meta.db_table}")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert index in plan, plan
    # No sort of the agency's records: at most each name's few sorted by id as they come.
    assert not re.search(r"(^|->\s+)Sort\s+\(", plan, re.MULTILINE), plan
