"""A staff member of several agencies pages through a changelist in its order, every page the
one a single statement over all of their records gives (issue 18). On PostgreSQL a page is read
one agency at a time (each agency's ids through its own index, then their union in the list's
order), as the API reads its lists (apps.core.pagination); on SQLite, which cannot order the
parts of a UNION, at once. The list's count without its filters ("N total") is counted as the
page count is, under the data version."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.clients.models import Client
from apps.core.dates import today
from apps.drivers.admin import DriverAdmin
from apps.drivers.models import Driver
from apps.policies.admin import PolicyAdmin
from apps.policies.models import Policy
from tests.admin.counts import counts_of
from tests.conftest import staff_member
from tests.factories import ClientFactory, DriverFactory, PolicyFactory

pytestmark = pytest.mark.django_db


def rows(path: str, page: str) -> list[int]:
    """The ids of a changelist page's rows, in order: each row links to its change page once."""
    return [int(pk) for pk in re.findall(rf'href="{path}(\d+)/change/', page)]


@pytest.fixture
def broker_client(client, groups, agency, other_agency):
    """The admin as a staff member of both agencies."""
    client.force_login(staff_member([agency, other_agency], groups, username="broker-staff"))
    return client


@pytest.fixture
def books(agency, other_agency):
    """Drivers and policies of both agencies, their orders interleaved, with ties."""
    clients = {a: ClientFactory(agency=a) for a in (agency, other_agency)}
    names = ["Baker", "Adams", "Baker", "Cole", "Adams", "Diaz", "Cole", "Baker", "Evans"]
    for n, last_name in enumerate(names):
        owner = clients[(agency, other_agency)[n % 2]]
        DriverFactory(client=owner, last_name=last_name, first_name=f"F{n % 3}")
    for n in range(9):
        owner = clients[(other_agency, agency)[n % 2]]
        PolicyFactory(client=owner, effective_date=today() - dt.timedelta(days=30 * (n % 4)))
    return clients


def walk(client, path: str, pages: int) -> tuple[list[int], list[str]]:
    """The ids of every page of a changelist, in order, and the SQL of their id statements."""
    ids, statements = [], []
    for page in range(1, pages + 1):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(f"{path}?p={page}")
        assert response.status_code == 200
        ids += rows(path, response.content.decode())
        statements += [q["sql"] for q in queries.captured_queries]
    return ids, statements


@pytest.mark.parametrize(
    "admin_class, model, path, order",
    [
        (DriverAdmin, Driver, "/admin/drivers/driver/", ("last_name", "first_name", "id")),
        (PolicyAdmin, Policy, "/admin/policies/policy/", ("-effective_date", "id")),
    ],
)
def test_every_page_is_the_one_a_single_statement_gives(
    broker_client, agency, other_agency, books, monkeypatch, admin_class, model, path, order
):
    monkeypatch.setattr(admin_class, "list_per_page", 4)
    whole = list(
        model.objects.filter(agency__in=[agency, other_agency])
        .order_by(*order)
        .values_list("pk", flat=True)
    )
    assert len(whole) == 9
    ids, statements = walk(broker_client, path, pages=3)  # 4, 4 and the last 1
    assert ids == whole
    unions = [sql for sql in statements if "UNION ALL" in sql]
    if connection.features.supports_slicing_ordering_in_compound:
        assert len(unions) == 3, statements  # one per page
        table = model._meta.db_table
        assert all(sql.count(f'"{table}"."agency_id" = ') == 2 for sql in unions), unions
    else:
        assert not unions


def test_a_staff_member_of_one_agency_pages_as_django_does(
    staff_client, agency, other_agency, books, monkeypatch
):
    monkeypatch.setattr(DriverAdmin, "list_per_page", 4)
    whole = list(
        Driver.objects.filter(agency=agency)
        .order_by("last_name", "first_name", "id")
        .values_list("pk", flat=True)
    )
    ids, statements = walk(staff_client, "/admin/drivers/driver/", pages=2)
    assert ids == whole and len(whole) == 5  # the other agency's four never shown
    assert not [sql for sql in statements if "UNION" in sql]


def test_a_search_and_a_sort_by_a_column_of_the_list_page_through_the_union(
    broker_client, agency, other_agency, books, monkeypatch
):
    # A search's condition is in each agency's part; a column header's sort (the first name,
    # descending) orders the parts and their union alike.
    monkeypatch.setattr(DriverAdmin, "list_per_page", 2)
    scoped = Driver.objects.filter(agency__in=[agency, other_agency])
    bakers = list(
        scoped.filter(last_name="Baker")
        .order_by("last_name", "first_name", "id")
        .values_list("pk", flat=True)
    )
    assert len(bakers) == 3
    path = "/admin/drivers/driver/"
    ids, statements = [], []
    for page in (1, 2):
        with CaptureQueriesContext(connection) as queries:
            response = broker_client.get(path, {"q": "Baker", "p": page})
        ids += rows(path, response.content.decode())
        statements += [q["sql"] for q in queries.captured_queries]
    assert ids == bakers
    descending = list(scoped.order_by("-first_name", "-id").values_list("pk", flat=True))
    for page in (1, 2, 3, 4, 5):
        with CaptureQueriesContext(connection) as queries:
            response = broker_client.get(path, {"o": "-1", "p": page})
        ids += rows(path, response.content.decode())
        statements += [q["sql"] for q in queries.captured_queries]
    assert ids[3:] == descending
    unions = [sql for sql in statements if "UNION ALL" in sql]
    if connection.features.supports_slicing_ordering_in_compound:
        assert len(unions) == 7  # one a page
    else:
        assert not unions


def test_the_autocomplete_of_a_staff_member_of_two_agencies_pages_through_the_union(
    broker_client, agency, other_agency, books
):
    # The admin's autocomplete pages with the admin's paginator: its first page of clients,
    # in the client list's order, from both agencies and only theirs.
    for n in range(25):
        ClientFactory(agency=(agency, other_agency)[n % 2], client_name=f"Fleet {n:02d}")
    ClientFactory(client_name="Fleet of a third agency")
    response = broker_client.get(
        "/admin/autocomplete/",
        {"term": "Fleet", "app_label": "drivers", "model_name": "driver", "field_name": "client"},
    )
    body = response.json()
    assert [r["text"] for r in body["results"]] == [
        str(c)
        for c in Client.objects.filter(
            agency__in=[agency, other_agency], client_name__startswith="Fleet"
        ).order_by("client_name", "id")[:20]
    ]
    assert body["pagination"]["more"] is True


def test_an_order_by_a_relation_and_a_search_page_at_once(broker_client, books, monkeypatch):
    # The "type" column sorts by the coverage type's code (a join): read by one statement.
    # A search of one match shows it alone.
    monkeypatch.setattr(PolicyAdmin, "list_per_page", 4)
    with CaptureQueriesContext(connection) as queries:
        response = broker_client.get("/admin/policies/policy/?o=2")
    path = "/admin/policies/policy/"
    assert response.status_code == 200 and len(rows(path, response.content.decode())) == 4
    assert not [q for q in queries.captured_queries if "UNION" in q["sql"]]
    number = Policy.objects.order_by("id").values_list("policy_number", flat=True)[4]
    response = broker_client.get(f"{path}?q={number}")
    assert rows(path, response.content.decode()) == list(
        Policy.objects.filter(policy_number=number).values_list("pk", flat=True)
    )


def test_the_list_without_its_filters_is_counted_once_until_a_write(
    broker_client, agency, books, settings
):
    settings.LIST_COUNT_CACHE_SECONDS = 60
    driver = Driver.objects.filter(last_name="Diaz").get()

    def view():
        # The counts of the list without its filters: the statements that name no "Diaz".
        return counts_of(
            broker_client, "/admin/drivers/driver/?q=Diaz", lambda sql: "Diaz" not in sql
        )

    counts, page = view()
    assert counts == 1 and "1 result" in page and "9 total" in page
    assert rows("/admin/drivers/driver/", page) == [driver.pk]
    counts, page = view()
    assert counts == 0 and "9 total" in page
    DriverFactory(client=books[agency], last_name="Zeller")
    counts, page = view()
    assert counts == 1 and "10 total" in page
