"""`sort=licenseState` orders by the licence state's code copied onto the driver (issue 18):
the same order the join to the states gave, drivers without a state included, in both
directions and on every page; the copy follows the state whoever writes it."""

from __future__ import annotations

import pytest

from apps.drivers.models import Driver
from apps.masterdata.models import State
from tests.conftest import ids_statement, page_ids
from tests.factories import ClientFactory, DriverFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def drivers(agency, other_agency):
    states = {code: State.objects.get(code=code) for code in ("TX", "CA", "OK")}
    client = ClientFactory(agency=agency)
    made = [
        DriverFactory(client=client, license_state=states[code] if code else None)
        for code in ("TX", None, "CA", "TX", None, "OK", "CA")
    ]
    DriverFactory(client=ClientFactory(agency=other_agency), license_state=states["CA"])
    return made


@pytest.mark.parametrize("sort", ["licenseState", "-licenseState", "-licenseState,-id"])
def test_the_order_is_the_one_the_join_to_the_states_gave(
    api, agency, drivers, sort, django_assert_max_num_queries
):
    terms = [
        ("-" if part.startswith("-") else "")
        + {"licenseState": "license_state__code", "id": "id"}[part.lstrip("-")]
        for part in sort.split(",")
    ]
    terms += [] if any(term.lstrip("-") == "id" for term in terms) else ["id"]
    joined = list(
        Driver.objects.filter(agency=agency).order_by(*terms).values_list("pk", flat=True)
    )
    assert page_ids(api.get(f"/v1/drivers?sort={sort}&limit=100")) == joined
    paged = []
    for page in (1, 2, 3, 4):  # the last pages are read backwards
        with django_assert_max_num_queries(9):
            paged += page_ids(api.get(f"/v1/drivers?sort={sort}&limit=2&page={page}"))
    assert paged == joined


def test_the_copy_follows_the_state_whoever_writes(api, drivers):
    texan = drivers[0]
    assert Driver.objects.get(pk=texan.pk).license_state_code == "TX"
    response = api.put(f"/v1/drivers/{texan.pk}", {"licenseState": "AL"}, format="json")
    assert response.status_code == 200, response.content
    assert Driver.objects.get(pk=texan.pk).license_state_code == "AL"
    # AL comes before every other state; drivers without one sort first on SQLite and last on
    # PostgreSQL, as each database orders NULL (and as the join to the states did).
    answered = page_ids(api.get("/v1/drivers?sort=licenseState&limit=100"))
    stated = [pk for pk in answered if pk not in {drivers[1].pk, drivers[4].pk}]
    assert stated[0] == texan.pk and len(answered) == len(stated) + 2

    texan.license_state = None
    texan.save(update_fields=["license_state"])
    assert Driver.objects.get(pk=texan.pk).license_state_code is None

    built = DriverFactory.build(client=texan.client, license_state=State.objects.get(code="WY"))
    (created,) = Driver.objects.bulk_create([built])
    assert Driver.objects.get(pk=created.pk).license_state_code == "WY"


def test_the_sort_reads_the_copy_not_the_states(api, drivers, django_assert_max_num_queries):
    with django_assert_max_num_queries(9) as queries:
        api.get("/v1/drivers?sort=licenseState&limit=2")
    # The page's ids, in order, from the drivers alone (their rows are read by id after).
    ids = ids_statement(queries, "drivers_driver")
    assert '"drivers_driver"."license_state_code" ASC' in ids
    assert "masterdata_state" not in ids


def test_saving_a_driver_loaded_without_its_state_reads_no_state(agency):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    texas, california = State.objects.get(code="TX"), State.objects.get(code="CA")
    made = DriverFactory(client=ClientFactory(agency=agency), license_state=texas)
    driver = Driver.objects.get(pk=made.pk)
    driver.first_name = "Renamed"
    with CaptureQueriesContext(connection) as queries:
        driver.save()
    assert not [q for q in queries if "masterdata_state" in q["sql"]], queries.captured_queries
    assert Driver.objects.get(pk=made.pk).license_state_code == "TX"

    # A new state is still read, and the copy follows it.
    driver.license_state_id = california.pk
    driver.save()
    assert Driver.objects.get(pk=made.pk).license_state_code == "CA"
    driver.license_state = None
    driver.save()
    assert Driver.objects.get(pk=made.pk).license_state_code is None


def test_a_driver_loaded_without_the_copy_clears_it_with_the_state(agency):
    made = DriverFactory(
        client=ClientFactory(agency=agency), license_state=State.objects.get(code="TX")
    )
    driver = Driver.objects.only("id", "license_state").get(pk=made.pk)
    driver.license_state = None
    driver.save(update_fields=["license_state"])
    assert Driver.objects.get(pk=made.pk).license_state_code is None
