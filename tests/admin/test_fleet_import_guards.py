"""Fleet files in the back-office: what a file may not do to the service or to the staff.

A file too big for one request is refused before a row is read (the import runs in one
transaction, which on SQLite holds every other writer); a Confirm posted twice at once imports
once; a cell holds a value the API could store and an export always opens. Over HTTP through
the admin, as a logged-in staff member of the agency.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from apps.vehicles.models import Vehicle
from tests.admin.test_fleet_import import _confirm, _csv, _preview, _xlsx
from tests.factories import ClientFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def carrier(agency):
    return ClientFactory(agency=agency, client_name="Lone Star Freight LLC", dot="1234567")


def unit_row(n: int) -> list[str]:
    """A good row of the vehicle file for unit n (a VIN of its own)."""
    return ["1234567", f"U{n}", f"1FUJGLDR7CLB{n:05d}", "2021", "Volvo", "Tractor", "", "", ""]


def page_text(response) -> str:
    return response.content.decode()


# 1. A file has a row limit and a size limit, checked before any row is processed.


@pytest.mark.parametrize("upload", [_csv, _xlsx])
def test_a_file_of_more_rows_than_the_limit_is_refused_before_any_row_is_read(
    staff_client, carrier, upload
):
    # 1,001 rows: one past the default limit, which is the API's batch size.
    with CaptureQueriesContext(connection) as queries:
        preview = _preview(
            staff_client, upload([unit_row(n) for n in range(1001)]), fmt=int(upload is _xlsx)
        )
    page = page_text(preview)
    assert preview.status_code == 200
    assert "The file has 1,001 rows; an import takes at most 1,000 rows." in page
    assert "Split the file, or use the API." in page
    assert preview.context.get("confirm_form") is None
    # No row was read: no master-data table loaded, no unit looked for, no savepoint
    assert not [q for q in queries if "masterdata_" in q["sql"] or "SAVEPOINT" in q["sql"]]
    assert not Vehicle.objects.exists()


@override_settings(IMPORT_MAX_ROWS=3)
def test_the_row_limit_is_a_setting_and_a_file_at_the_limit_imports(staff_client, carrier):
    refused = _preview(staff_client, _csv([unit_row(n) for n in range(4)]))
    assert "The file has 4 rows; an import takes at most 3 rows." in page_text(refused)
    preview = _preview(staff_client, _csv([unit_row(n) for n in range(3)]))
    assert "Import finished" in page_text(_confirm(staff_client, preview))
    assert Vehicle.objects.filter(client=carrier).count() == 3


@override_settings(IMPORT_MAX_BYTES=300)
def test_a_file_over_the_size_limit_is_refused_on_the_form(staff_client, carrier):
    upload = _csv([unit_row(n) for n in range(6)])
    size = upload.size
    assert size > 300
    preview = _preview(staff_client, upload)
    assert preview.status_code == 200
    assert preview.context["form"].errors["import_file"] == [
        f"The file is {size:,} bytes; an import takes at most 300 bytes. "
        "Split the file, or use the API."
    ]
    assert preview.context.get("confirm_form") is None
    assert not Vehicle.objects.exists()


def test_a_city_named_on_many_rows_is_looked_up_once(staff_client, carrier):
    header = ["dot", "first_name", "last_name", "driver_type", "city", "state"]
    rows = [["1234567", f"D{n}", "Lee", "Company Driver", "Dallas", "TX"] for n in range(5)]
    with CaptureQueriesContext(connection) as queries:
        preview = _preview(staff_client, _csv(rows, header=header), model="drivers/driver")
    assert preview.context["confirm_form"] is not None, page_text(preview)[-2000:]
    # found by its name once (the service still checks each row's city exists, as for the API)
    assert len([q for q in queries if '"masterdata_city"."name_key" =' in q["sql"]]) == 1
