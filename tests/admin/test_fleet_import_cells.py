"""Fleet files in the back-office: a cell is judged as the API judges the same value.

One rule per value, written once: a file's cell that `POST /v1/vehicles` would refuse is
refused on its row and column with the API's message, and one it takes is stored as the API
stores it. Over HTTP through the admin, as a logged-in staff member of the agency, beside the
API called with the same text. A refused row is named as the spreadsheet numbers it: the
header is row 1, the first data row 2.
"""

from __future__ import annotations

import csv
import datetime as dt
import html
import io
import re
from decimal import Decimal

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.dates import DATE_MESSAGE, today
from apps.drivers.models import Driver
from apps.vehicles.models import Vehicle
from apps.vehicles.resources import VehicleResource
from tests.admin.test_fleet_import import HEADER, _confirm, _csv, _preview, _xlsx
from tests.admin.test_fleet_import_guards import _refusals, unit_row
from tests.conftest import assert_problem
from tests.factories import ClientFactory, VehicleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def carrier(agency):
    return ClientFactory(agency=agency, client_name="Lone Star Freight LLC", dot="1234567")


def api_refusal(api, carrier, field: str, value) -> str:
    """What `POST /v1/vehicles` answers on `field` sent with `value` (a 400)."""
    body = {
        "clientId": carrier.id,
        "unit": "API-1",
        "unitTypeName": "Tractor",
        "modelYear": 2021,
        "makeCompanyName": "Volvo",
        "serialNumber": "1FUJGLDR7CLBP7001",
        field: value,
    }
    errors = assert_problem(api.post("/v1/vehicles", body, format="json"), 400)["errors"]
    return {e["field"]: e["message"] for e in errors}[field]


# 1. Money: the API's rule (apps.core.serializers.StrictMoneyField); a thousands separator
#    grouping the digits as 1,234,567.89 does is a spreadsheet's, and is taken.

MONEY_HEADER = [*HEADER, "stated_value"]
MONEY_REFUSED = [
    "12,34",  # stored 1234.00
    "1234.567",  # stored 1234.57
    "0.001",  # stored 0.00
    "1e3",  # stored 1000.00
    "1_000",  # stored 1000.00
    "1,2345.00",
    "1234,567.00",
    "0,123.00",
    ",123",
    "1,234,",
    "$1,234.50",
    "NaN",
    "\uff11\uff12",  # full-width digits
    "-5.00",
    "99999999999999999",
]


def test_a_money_cell_the_api_refuses_is_refused_on_its_row_and_column_as_the_api_says(
    staff_client, api, carrier
):
    rows = [[*unit_row(n), value] for n, value in enumerate(MONEY_REFUSED, 1)]
    refused = _refusals(_preview(staff_client, _csv(rows, header=MONEY_HEADER)))
    expected = {
        (n + 1, "stated_value"): [api_refusal(api, carrier, "statedValue", value)]
        for n, value in enumerate(MONEY_REFUSED, 1)
    }
    assert refused == expected
    assert not Vehicle.objects.exists()


def test_a_grouped_amount_is_refused_as_the_api_refuses_the_amount_it_groups(
    staff_client, api, carrier
):
    rows = [[*unit_row(1), "1,234.567"]]
    refused = _refusals(_preview(staff_client, _csv(rows, header=MONEY_HEADER)))
    assert refused == {(2, "stated_value"): [api_refusal(api, carrier, "statedValue", "1234.567")]}


@pytest.mark.parametrize(
    ("cell", "stored"),
    [
        ("145000", "145000.00"),
        ("145000.5", "145000.50"),
        (" 98000.00 ", "98000.00"),
        ("0", "0.00"),
        ("1,234.50", "1234.50"),
        ("1,234,567", "1234567.00"),
        ("999", "999.00"),
        ("", None),
    ],
)
def test_a_money_cell_is_stored_as_the_api_stores_the_same_text(
    staff_client, api, carrier, cell, stored
):
    preview = _preview(staff_client, _csv([[*unit_row(1), cell]], header=MONEY_HEADER))
    done = _confirm(staff_client, preview)
    assert "Import finished" in done.content.decode()
    expected = None if stored is None else Decimal(stored)
    assert Vehicle.objects.get().stated_value == expected


def test_an_xlsx_money_cell_is_judged_by_the_number_it_holds(staff_client, api, carrier):
    rows = [[*unit_row(1), 1234.567], [*unit_row(2), 12.5], [*unit_row(3), 98000]]
    preview = _preview(staff_client, _xlsx(rows, header=MONEY_HEADER), fmt=1)
    assert _refusals(preview) == {
        (2, "stated_value"): [api_refusal(api, carrier, "statedValue", "1234.567")]
    }
    rows.pop(0)
    done = _confirm(staff_client, _preview(staff_client, _xlsx(rows, MONEY_HEADER), fmt=1))
    assert "Import finished" in done.content.decode()
    values = sorted(v.stated_value for v in Vehicle.objects.all())
    assert values == [Decimal("12.50"), Decimal("98000.00")]


# 2. A model year: the API's range, and not more than two years ahead (the service's rule, so
#    the API's, the admin's and the file's).


def test_a_model_year_the_api_refuses_is_refused_on_its_row_and_column_as_the_api_says(
    staff_client, api, carrier
):
    years = [1899, 2101, today().year + 3]
    rows = [unit_row(n) for n in range(1, len(years) + 1)]
    for row, year in zip(rows, years, strict=True):
        row[3] = str(year)
    refused = _refusals(_preview(staff_client, _csv(rows)))
    assert refused == {
        (n + 1, "year"): [api_refusal(api, carrier, "modelYear", year)]
        for n, year in enumerate(years, 1)
    }
    assert refused[(4, "year")] == ["Model year is too far in the future."]
    assert not Vehicle.objects.exists()


def test_a_model_year_two_years_ahead_is_taken(staff_client, carrier):
    row = unit_row(1)
    row[3] = str(today().year + 2)
    done = _confirm(staff_client, _preview(staff_client, _csv([row])))
    assert "Import finished" in done.content.decode()
    assert Vehicle.objects.get().model_year == today().year + 2


# 3. A date: the API's forms, exactly (ASCII digits, zero-padded), and M/D/YYYY as a
#    spreadsheet writes a date in a CSV.

DAY_MESSAGE = "Expected a date as YYYY-MM-DD or MM-dd-yyyy, or M/D/YYYY as a spreadsheet writes it."
DATE_HEADER = ["dot", "first_name", "last_name", "driver_type", "date_of_birth"]
DATE_REFUSED = [
    "1990-3-1",  # stored 1990-03-01
    "3-1-1990",  # stored 1990-03-01
    "\uff11\uff19\uff19\uff10-01-31",  # full-width digits, stored 1990-01-31
    "1990-02-30",
    "31/01/1990",
    "1990/01/31",
    "01-31-90",
]


def test_a_date_the_api_refuses_is_refused_on_its_row_and_column(staff_client, api, carrier):
    rows = [
        ["1234567", f"D{n}", "Lee", "Company Driver", day] for n, day in enumerate(DATE_REFUSED)
    ]
    preview = _preview(staff_client, _csv(rows, header=DATE_HEADER), model="drivers/driver")
    assert _refusals(preview) == {
        (n, "date_of_birth"): [DAY_MESSAGE] for n in range(2, len(DATE_REFUSED) + 2)
    }
    for day in DATE_REFUSED:
        body = {
            "clientId": carrier.id,
            "firstName": "Ann",
            "lastName": "Lee",
            "driverType": "Company Driver",
            "dateOfBirth": day,
        }
        errors = assert_problem(api.post("/v1/drivers", body, format="json"), 400)["errors"]
        assert {e["field"]: e["message"] for e in errors} == {"dateOfBirth": DATE_MESSAGE}
    assert not Driver.objects.exists()


@pytest.mark.parametrize("day", ["1990-01-31", "01-31-1990", "01/31/1990", "1/31/1990"])
def test_a_date_is_read_in_the_apis_forms_and_as_a_spreadsheet_writes_it(
    staff_client, carrier, day
):
    rows = [["1234567", "Ann", "Lee", "Company Driver", day]]
    preview = _preview(staff_client, _csv(rows, header=DATE_HEADER), model="drivers/driver")
    assert (
        "Import finished"
        in _confirm(staff_client, preview, model="drivers/driver").content.decode()
    )
    assert Driver.objects.get().date_of_birth == dt.date(1990, 1, 31)


# 4. Text: the preview shows what will be stored; an export writes text a spreadsheet would run
#    as a formula with one more leading ', and its import takes that one off again.

EXPORT_COLUMNS = VehicleResource.Meta.fields  # every column of the vehicles' fleet file
TEXTS = [
    "=1+1",
    '=HYPERLINK("http://evil.example","x")',
    "+1 555 0100",
    "-5 axle",
    "@SUM(A1)",
    "'=1+1",  # typed so through the API: the ' is part of the text
    "''+x",
    "'quoted",
    "plain",
]


def preview_cells(preview, column: str) -> list[str]:
    """The preview's cells of `column`, as text (the library shows each as a diff)."""
    result = preview.context["result"]
    at = list(result.diff_headers).index(column)
    return [html.unescape(re.sub(r"<[^>]*>", "", row.diff[at])) for row in result.valid_rows()]


@pytest.mark.parametrize("fmt", ["0", "1"])
def test_an_exported_file_imports_back_the_text_it_was_exported_from(staff_client, carrier, fmt):
    for n, text in enumerate(TEXTS):
        VehicleFactory(client=carrier, unit=f"{text[:30]} {n}", owner=text, garaging_address=text)
    stored = sorted((v.unit, v.owner, v.garaging_address) for v in Vehicle.objects.all())
    form = {
        "format": fmt,
        "resource": "0",
        **{f"vehicleresource_{c}": "on" for c in EXPORT_COLUMNS},
    }
    exported = staff_client.post("/admin/vehicles/vehicle/export/", form).content
    if fmt == "0":
        cells = [cell for row in csv.reader(io.StringIO(exported.decode())) for cell in row]
    else:
        sheet = openpyxl.load_workbook(io.BytesIO(exported)).active
        assert all(cell.data_type != "f" for row in sheet.iter_rows() for cell in row)
        cells = [cell for row in sheet.values for cell in row if isinstance(cell, str)]
    assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@"))]  # none runs
    assert "'" + TEXTS[0] in cells and "''=1+1" in cells and "'quoted" in cells

    Vehicle.objects.all().delete()
    name = "fleet.csv" if fmt == "0" else "fleet.xlsx"
    preview = _preview(staff_client, SimpleUploadedFile(name, exported), fmt=int(fmt))
    assert sorted(preview_cells(preview, "owner")) == sorted(TEXTS)  # as it will be stored
    assert "Import finished" in _confirm(staff_client, preview).content.decode()
    assert sorted((v.unit, v.owner, v.garaging_address) for v in Vehicle.objects.all()) == stored


def test_the_preview_shows_each_cell_as_it_will_be_stored(staff_client, carrier):
    header = [*HEADER, "owner"]
    rows = [[*unit_row(1), "'=1+1"]]
    rows[0][6] = "tx-501a"  # plate: stored in upper case
    preview = _preview(staff_client, _csv(rows, header=header))
    assert preview_cells(preview, "owner") == ["=1+1"]
    assert preview_cells(preview, "plate") == ["TX-501A"]
    assert "Import finished" in _confirm(staff_client, preview).content.decode()
    unit = Vehicle.objects.get()
    assert (unit.owner, unit.license_plate) == ("=1+1", "TX-501A")
    drivers = [["1234567", "Ann", "Lee", "Company Driver", " tx77 "]]
    header = ["dot", "first_name", "last_name", "driver_type", "license_number"]
    preview = _preview(staff_client, _csv(drivers, header=header), model="drivers/driver")
    assert preview_cells(preview, "license_number") == ["TX77"]
    _confirm(staff_client, preview, model="drivers/driver")
    assert Driver.objects.get().license_number == "TX77"


@pytest.mark.parametrize("model", ["vehicles/vehicle", "drivers/driver"])
def test_the_import_page_says_how_its_cells_are_read(staff_client, model):
    page = staff_client.get(f"/admin/{model}/import/").content.decode()
    rules = page.split('id="import-rules"')[1].split("</div>")[0]
    for said in ("<code>1,234.50</code>", "<code>1/31/2026</code>", "<code>''=1+1</code>"):
        assert said in rules
    assert "the header is row 1, and blank rows count" in rules
