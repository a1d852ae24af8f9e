"""Fleet files in the back-office: what a file may not do to the service or to the staff.

A file too big for one request is refused before a row is imported, an XLSX read no further
than one row past the limit (the import runs in one transaction, which on SQLite holds every
other writer); a Confirm posted twice at once imports once, and only by who uploaded the file;
a cell holds a value the API could store and an export always opens. Over HTTP through the
admin, as a logged-in staff member of the agency.
"""

from __future__ import annotations

import csv
import io
import re
import threading
import zipfile
from unittest import mock

import openpyxl
import pytest
from django.core.cache.backends.locmem import LocMemCache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from openpyxl.styles import PatternFill
from openpyxl.worksheet._reader import WorkSheetParser

from apps.core.identifiers import VIN_MESSAGE
from apps.core.parsers import NUL_MESSAGE
from apps.drivers.models import Driver
from apps.drivers.resources import DriverResource
from apps.vehicles.models import Vehicle
from tests.admin.test_fleet_import import HEADER, _confirm, _csv, _preview, _xlsx
from tests.conftest import staff_member
from tests.factories import ClientFactory, VehicleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def carrier(agency):
    return ClientFactory(agency=agency, client_name="Lone Star Freight LLC", dot="1234567")


EMPTY = "This cell is empty; the column is required."
FORMULA = "This cell holds a formula, not a value: type the value."


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
    # an XLSX is read no further than one row past the limit: how many more is not known
    count = "more than 1,000" if upload is _xlsx else "1,001"
    assert f"The file has {count} rows; an import takes at most 1,000 rows." in page
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


def _sheet(rows, *, header=HEADER, blank_rows=0, dimension=None, cells=()):
    """An XLSX file of `rows` under `header`, then `blank_rows` rows only formatted (a fill, no
    value, as Excel keeps them), `cells` ((row, value) in column A) and its declared
    dimension replaced by `dimension`."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    fill = PatternFill("solid", fgColor="FFFF00")
    for r in range(len(rows) + 2, len(rows) + 2 + blank_rows):
        for c in range(1, len(header) + 1):
            sheet.cell(r, c).fill = fill
    for r, value in cells:
        sheet.cell(r, 1, value)
    buffer = io.BytesIO()
    book.save(buffer)
    if dimension:
        source, buffer = zipfile.ZipFile(buffer), io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as out:
            for item in source.infolist():
                data = source.read(item)
                if item.filename == "xl/worksheets/sheet1.xml":
                    data = re.sub(
                        rb'<dimension ref="[^"]*"', f'<dimension ref="{dimension}"'.encode(), data
                    )
                out.writestr(item, data)
    return SimpleUploadedFile("fleet.xlsx", buffer.getvalue())


def counting_rows_parsed(parsed: list):
    """openpyxl's parser of a sheet's row, appending to `parsed` for each row it parses."""
    parse_row = WorkSheetParser.parse_row

    def counted(parser, row):
        parsed.append(row)
        return parse_row(parser, row)

    return counted


@override_settings(IMPORT_MAX_ROWS=3)
def test_an_xlsx_is_read_no_further_than_one_row_past_the_limit(staff_client, carrier):
    parsed = []
    with mock.patch.object(WorkSheetParser, "parse_row", counting_rows_parsed(parsed)):
        preview = _preview(staff_client, _sheet([unit_row(n) for n in range(300)]), fmt=1)
    assert "The file has more than 3 rows; an import takes at most 3 rows." in page_text(preview)
    assert preview.context.get("confirm_form") is None
    assert len(parsed) < 20  # of 301
    assert not Vehicle.objects.exists()


def test_a_sparse_xlsx_of_more_rows_than_the_limit_is_refused(staff_client, carrier):
    # 1,001 cells, one every fifth row: the rows between are blank, the file is over the limit
    cells = [(5 * n, "1234567") for n in range(1, 1002)]
    preview = _preview(staff_client, _sheet([], cells=cells), fmt=1)
    page = page_text(preview)
    assert "The file has more than 1,000 rows; an import takes at most 1,000 rows." in page
    assert preview.context.get("confirm_form") is None


def test_a_lone_cell_far_down_an_xlsx_is_one_row(staff_client, carrier):
    # blank rows are not rows of the file: the cell at A20000 is its only row, its errors shown
    # under the number the sheet gives it: each required cell it left empty
    preview = _preview(staff_client, _sheet([], cells=[(20000, "1234567")]), fmt=1)
    assert preview.context["result"].total_rows == 1
    empty = ["This cell is empty; the column is required."]
    assert _refusals(preview) == {
        (20000, "vin"): ["The VIN is missing."],
        **{(20000, column): empty for column in ("unit", "year", "make", "unit_type")},
    }


def test_an_xlsx_with_blank_formatted_rows_after_its_rows_imports_its_rows(staff_client, carrier):
    upload = _sheet([unit_row(n) for n in range(3)], blank_rows=3000)
    preview = _preview(staff_client, upload, fmt=1)
    assert preview.context["confirm_form"] is not None, page_text(preview)[-2000:]
    assert "Import finished: 3 new" in page_text(_confirm(staff_client, preview))
    assert Vehicle.objects.filter(client=carrier).count() == 3


def test_an_xlsx_declaring_every_column_imports_the_columns_it_names(staff_client, carrier):
    upload = _sheet([unit_row(n) for n in range(3)], dimension="A1:XFD1001")
    preview = _preview(staff_client, upload, fmt=1)
    assert preview.context["confirm_form"] is not None, page_text(preview)[-2000:]
    assert "Import finished: 3 new" in page_text(_confirm(staff_client, preview))
    assert Vehicle.objects.filter(client=carrier).count() == 3


def test_a_csv_with_lines_of_only_commas_imports_its_rows(staff_client, carrier):
    text = _csv([unit_row(n) for n in range(3)]).read().decode() + ",,,,,,,,\r\n" * 3
    upload = SimpleUploadedFile("fleet.csv", text.encode(), content_type="text/csv")
    preview = _preview(staff_client, upload)
    assert preview.context["confirm_form"] is not None, page_text(preview)[-2000:]
    assert preview.context["result"].total_rows == 3
    assert "Import finished: 3 new" in page_text(_confirm(staff_client, preview))
    assert Vehicle.objects.filter(client=carrier).count() == 3


BAD_VIN = "1FUJGLDR7CLBP05O5"
ROWS_AS_THE_SHEET_NUMBERS_THEM = "the header is row 1, and blank rows count"


def test_a_refused_csv_row_is_numbered_as_the_spreadsheet_numbers_it(staff_client, carrier):
    # A good row, two rows emptied (commas only), an empty line, then a bad VIN: row 6 of the
    # sheet (data row 5), where the page said "Row 2", the blank rows left out of the count.
    bad = unit_row(2)
    bad[2] = BAD_VIN
    lines = io.StringIO()
    csv.writer(lines).writerows([HEADER, unit_row(1), [""] * 9, [""] * 9])
    text = lines.getvalue() + "\r\n" + ",".join(bad) + "\r\n"
    preview = _preview(staff_client, SimpleUploadedFile("fleet.csv", text.encode()))
    assert _refusals(preview) == {(6, "vin"): [f"Bad VIN “{BAD_VIN}”. {VIN_MESSAGE}"]}
    errors = page_text(preview).split('id="import-errors"')[1].split("</table>")[0]
    assert "<tr><td>6</td><td><code>vin</code></td>" in errors
    assert ROWS_AS_THE_SHEET_NUMBERS_THEM in page_text(preview)
    # A cell holding a line break is one row of the sheet, though two lines of the text.
    header = [*HEADER, "owner"]
    rows = [[*unit_row(1), "Suite 5\nDallas"], [*bad, ""]]
    preview = _preview(staff_client, _csv(rows, header=header))
    assert list(_refusals(preview)) == [(3, "vin")]


def test_a_refused_xlsx_row_is_numbered_as_the_spreadsheet_numbers_it(staff_client, carrier):
    bad = unit_row(2)
    bad[2] = BAD_VIN
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(HEADER)
    sheet.append(unit_row(1))
    sheet.cell(4, 7, " ")  # a row of spaces only is blank too
    for column, value in enumerate(bad, 1):
        sheet.cell(6, column, value)
    buffer = io.BytesIO()
    book.save(buffer)
    upload = SimpleUploadedFile("fleet.xlsx", buffer.getvalue())
    preview = _preview(staff_client, upload, fmt=1)
    assert _refusals(preview) == {(6, "vin"): [f"Bad VIN “{BAD_VIN}”. {VIN_MESSAGE}"]}
    assert ROWS_AS_THE_SHEET_NUMBERS_THEM in page_text(preview)


def test_a_city_named_on_many_rows_is_looked_up_once(staff_client, carrier):
    header = ["dot", "first_name", "last_name", "driver_type", "city", "state"]
    rows = [["1234567", f"D{n}", "Lee", "Company Driver", "Dallas", "TX"] for n in range(5)]
    with CaptureQueriesContext(connection) as queries:
        preview = _preview(staff_client, _csv(rows, header=header), model="drivers/driver")
    assert preview.context["confirm_form"] is not None, page_text(preview)[-2000:]
    # found by its name once (the service still checks each row's city exists, as for the API)
    assert len([q for q in queries if '"masterdata_city"."name_key" =' in q["sql"]]) == 1


# 2. A previewed file is imported once, however many confirms arrive at once.

DRIVER_HEADER = ["dot", "first_name", "last_name", "driver_type"]


def _drivers(count: int):
    rows = [["1234567", f"Twin{n}", "Dbl", "Company Driver"] for n in range(count)]
    return _csv(rows, header=DRIVER_HEADER)


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def test_a_confirm_arriving_while_the_file_is_being_imported_imports_nothing(
    staff_client, staff, carrier
):
    # The second confirm is sent while the first is importing its first row: it must neither
    # import the file again nor wait for it, and it says why.
    preview = _preview(staff_client, _drivers(3), model="drivers/driver")
    other_tab = Client()
    other_tab.force_login(staff)
    meanwhile = []
    service = DriverResource.service

    def first_row_then_second_confirm(**fields):
        if not meanwhile:
            meanwhile.append(None)
            meanwhile[0] = _confirm(other_tab, preview, model="drivers/driver")
        return service(**fields)

    with mock.patch.object(DriverResource, "service", staticmethod(first_row_then_second_confirm)):
        done = _confirm(staff_client, preview, model="drivers/driver")

    assert "Import finished: 3 new" in page_text(done)
    [second] = meanwhile
    assert second.status_code == 200
    assert any("being imported" in m for m in _messages(second)), _messages(second)
    assert Driver.objects.filter(client=carrier).count() == 3


def test_a_confirm_that_failed_may_be_confirmed_again(staff_client, carrier):
    # The claim on the file is released when its import fails, so the staff member can fix
    # what was in the way and confirm the same preview again.
    preview = _preview(staff_client, _csv([unit_row(1), unit_row(2)]))
    blocker = VehicleFactory(client=carrier, serial_number=unit_row(2)[2], unit="by hand")
    assert "Nothing was imported" in page_text(_confirm(staff_client, preview))
    blocker.delete()
    again = _confirm(staff_client, preview)
    assert "Import finished: 2 new" in page_text(again), _messages(again)
    assert Vehicle.objects.filter(client=carrier).count() == 2


SHARED_DATABASE_CACHE = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "django_cache",
    }
}


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs a server database")
def test_three_confirms_at_once_import_the_file_once(master_data_back, staff, carrier):
    # As the probe did: one preview, Confirm posted three times at once (three server threads
    # with their own connections, the database cache every node shares). It imported the
    # 30-driver file three times.
    with override_settings(CACHES=SHARED_DATABASE_CACHE):
        call_command("createcachetable", verbosity=0)  # as the settings' default does
        browsers = [Client() for _ in range(3)]
        for browser in browsers:
            browser.force_login(staff)
        preview = _preview(browsers[0], _drivers(30), model="drivers/driver")
        assert preview.context["confirm_form"] is not None
        start = threading.Barrier(len(browsers))
        answers = []

        def confirm(browser):
            try:
                start.wait()
                answers.append(_messages(_confirm(browser, preview, model="drivers/driver")))
            finally:
                connection.close()

        threads = [threading.Thread(target=confirm, args=(b,)) for b in browsers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)

    assert Driver.objects.filter(client=carrier).count() == 30
    said = sorted(" ".join(a) for a in answers)
    assert len(said) == 3
    assert sum("Import finished: 30 new" in s for s in said) == 1, said
    assert sum("nothing more was imported" in s for s in said) == 2, said


def test_a_file_the_cache_did_not_keep_is_said_so_on_the_import_page(staff_client, carrier):
    # Django's database cache drops a write that meets a locked SQLite database, silently: the
    # third of three 1,000-row previews at once said "'ImportFileGone' encountered while trying
    # to read file. Ensure you have chosen the correct format".
    dropped = mock.patch.multiple(LocMemCache, set=lambda *a, **k: None, add=lambda *a, **k: None)
    with dropped:
        preview = _preview(staff_client, _csv([unit_row(1)]))
    assert preview.status_code == 200
    assert preview.context.get("confirm_form") is None
    assert preview.context["form"].errors["import_file"] == [
        "The server is busy: the file could not be kept for the preview; upload it again."
    ]
    assert "encountered while trying to read file" not in page_text(preview)
    assert not Vehicle.objects.exists()


# 3. A cell holds text the API could store: no NUL (nor a lone surrogate).


def test_a_nul_in_a_cell_is_refused_on_its_row_and_column_as_the_api_refuses_it(
    staff_client, carrier
):
    header = [*HEADER, "owner"]
    rows = [[*unit_row(1), "N\x00UL Leasing"], [*unit_row(2), "Fine Leasing"]]
    rows[1][1] = "U\x002"
    preview = _preview(staff_client, _csv(rows, header=header))
    assert preview.context.get("confirm_form") is None
    refused = {
        (row.number, column): errors
        for row in preview.context["result"].invalid_rows
        for column, errors in row.field_specific_errors.items()
    }
    assert refused == {
        (2, "owner"): [NUL_MESSAGE],
        (3, "unit"): [NUL_MESSAGE],
    }
    assert not Vehicle.objects.exists()
    drivers = [["1234567", "Ann\x00", "Lee", "Company Driver"]]
    page = page_text(
        _preview(staff_client, _csv(drivers, header=DRIVER_HEADER), model="drivers/driver")
    )
    assert "Text cannot hold the NUL character (\\u0000)." in page
    assert not Driver.objects.exists()


# 4. An export always opens: what XLSX cannot hold is replaced, in XLSX only.

VEHICLE_COLUMNS = ["dot", "unit", "vin", "year", "make", "unit_type", "owner"]


def _export(
    staff_client,
    fmt: str,
    model="vehicles/vehicle",
    resource="vehicleresource",
    columns=VEHICLE_COLUMNS,
):
    form = {"format": fmt, "resource": "0", **{f"{resource}_{c}": "on" for c in columns}}
    return staff_client.post(f"/admin/{model}/export/", form)


def test_a_control_character_the_api_accepted_does_not_break_the_xlsx_export(
    staff_client, api, carrier
):
    body = {
        "clientId": carrier.id,
        "unit": "BELL-1",
        "unitTypeName": "Tractor",
        "modelYear": 2021,
        "makeCompanyName": "Volvo",
        "serialNumber": "1FUJGLDR7CLBP7001",
        "owner": "Bell\u0007Co",
    }
    assert api.post("/v1/vehicles", body, format="json").status_code == 201
    driver = {
        "clientId": carrier.id,
        "firstName": "Ctl\u0001",
        "lastName": "Lee",
        "driverType": "Company Driver",
    }
    assert api.post("/v1/drivers", driver, format="json").status_code == 201

    response = _export(staff_client, "1")
    assert response.status_code == 200, response.content[:500]
    [header, row] = list(openpyxl.load_workbook(io.BytesIO(response.content)).active.values)
    assert list(header) == VEHICLE_COLUMNS
    assert row[1] == "BELL-1" and row[6] == "Bell\ufffdCo"
    columns = ["dot", "first_name", "last_name", "driver_type"]
    drivers = _export(staff_client, "1", "drivers/driver", "driverresource", columns)
    [_, row] = list(openpyxl.load_workbook(io.BytesIO(drivers.content)).active.values)
    assert row[1:3] == ("Ctl\ufffd", "Lee")
    # CSV holds every character: unchanged
    lines = list(csv.reader(io.StringIO(_export(staff_client, "0").content.decode())))
    assert lines[1][6] == "Bell\u0007Co"


# 5. A confirm form altered by hand answers the import page again, never a 500.


@pytest.mark.parametrize(
    "altered",
    [
        {"format": "1"},
        {"format": "9"},
        {"format": "abc"},
        {"format": "-1"},
        {"resource": "7"},
        {"resource": "x"},
    ],
)
def test_an_altered_confirm_imports_nothing_and_says_so(staff_client, carrier, altered):
    preview = _preview(staff_client, _csv([unit_row(1)]))
    form = {**preview.context["confirm_form"].initial, **altered}
    answer = staff_client.post("/admin/vehicles/vehicle/process_import/", form, follow=True)
    assert answer.status_code in (200, 400)
    assert answer.request["PATH_INFO"] == "/admin/vehicles/vehicle/import/"
    assert any("nothing was imported" in m for m in _messages(answer)), _messages(answer)
    assert not Vehicle.objects.exists()
    # the file itself is still there, for the confirm as the page wrote it
    assert "Import finished: 1 new" in page_text(_confirm(staff_client, preview))


# 6. An empty required cell is an error of its row and column; every row's errors are shown.


def _refusals(preview) -> dict:
    assert preview.context.get("confirm_form") is None
    result = preview.context["result"]
    assert not result.has_errors(), [e.error for _, errs in result.row_errors() for e in errs]
    return {
        (row.number, column): [str(e) for e in errors]
        for row in result.invalid_rows
        for column, errors in row.field_specific_errors.items()
    }


def test_an_empty_required_cell_is_named_with_its_column_and_other_rows_errors_still_show(
    staff_client, carrier
):
    rows = [unit_row(1), unit_row(2), unit_row(3), unit_row(4)]
    rows[0][5] = ""  # unit_type
    rows[1][2] = "1FUJGLDR7CLBP05O5"  # a VIN with an O
    rows[2][4] = ""  # make
    rows[3][1] = ""  # unit
    preview = _preview(staff_client, _csv(rows))
    page = page_text(preview)
    assert _refusals(preview) == {
        (2, "unit_type"): [EMPTY],
        (3, "vin"): ["Bad VIN “1FUJGLDR7CLBP05O5”. " + VIN_MESSAGE],
        (4, "make"): [EMPTY],
        (5, "unit"): [EMPTY],
    }
    assert (
        "Vehicle has no" not in page and "None" not in page_text(preview).split("import-errors")[1]
    )
    drivers = [["1234567", "Ann", "Lee", ""], ["1234567", "Bo", "Diaz", "Pilot"]]
    preview = _preview(staff_client, _csv(drivers, header=DRIVER_HEADER), model="drivers/driver")
    assert _refusals(preview) == {
        (2, "driver_type"): [EMPTY],
        (3, "driver_type"): ["Unknown driver type “Pilot”."],
    }
    assert not Vehicle.objects.exists() and not Driver.objects.exists()


# 7. An XLSX cell holding a formula is refused: its value is what was typed.


def test_an_xlsx_formula_cell_is_refused_on_its_row_and_column(staff_client, carrier):
    header = [*HEADER, "owner"]
    rows = [[*unit_row(1), '=HYPERLINK("http://evil.example","click")'], [*unit_row(2), ""]]
    rows[1][1] = "=1+1"
    rows.append([*unit_row(3), "Fine Leasing"])
    rows[2][1] = None  # an empty cell: no unit to name the row by
    preview = _preview(staff_client, _xlsx(rows, header=header), fmt=1)
    assert _refusals(preview) == {
        (2, "owner"): [FORMULA],
        (3, "unit"): [FORMULA],
        (4, "unit"): [EMPTY],
    }
    errors = page_text(preview).split('id="import-errors"')[1].split("</table>")[0]
    assert "None" not in errors
    assert not Vehicle.objects.exists()


# 8. What is wrong with the header row is said as text, a column named twice included.


def _file_errors(preview) -> list[str]:
    assert preview.context.get("confirm_form") is None
    return [str(error.error) for error in preview.context["result"].base_errors]


def test_missing_columns_are_named_in_plain_text(staff_client, carrier):
    preview = _preview(staff_client, _csv([["1234567", "1"]], header=["dot", "unit"]))
    [message] = _file_errors(preview)
    assert message.startswith("The file has no column vin, year, make, unit_type; the first row")
    assert "['" not in page_text(preview) and "[&#x27;" not in page_text(preview)


def test_a_column_named_twice_is_refused_naming_it(staff_client, carrier):
    header = [*HEADER, "vin"]
    rows = [[*unit_row(1), "1FUJGLDR7CLBP0599"]]
    preview = _preview(staff_client, _csv(rows, header=header))
    assert _file_errors(preview) == [
        "The file has more than one column named vin; keep one of each."
    ]
    assert "The file has more than one column named vin" in page_text(preview)
    assert not Vehicle.objects.exists()


def test_another_agencys_staff_confirming_a_preview_imports_nothing_and_leaves_it(
    staff_client, groups, other_agency, carrier
):
    # The stored file is named only on its preview page; should another agency's staff member
    # post its confirm, it is refused as altered, though their agency has a client of the same
    # DOT (a DOT is unique within one agency only), and the file is left for its owner.
    theirs = ClientFactory(agency=other_agency, client_name="Same DOT Co", dot=carrier.dot)
    preview = _preview(staff_client, _csv([unit_row(1)]))
    rival_staff = Client()
    rival_staff.force_login(staff_member([other_agency], groups, "rival-staff"))
    answer = _confirm(rival_staff, preview)
    assert any("incomplete or altered: nothing was imported" in m for m in _messages(answer)), (
        _messages(answer)
    )
    assert not Vehicle.objects.filter(client=theirs).exists()
    assert not Vehicle.objects.exists()
    assert "Import finished: 1 new" in page_text(_confirm(staff_client, preview))
    assert Vehicle.objects.get().client == carrier


def test_a_preview_is_confirmed_only_by_the_staff_member_who_uploaded_it(
    staff_client, groups, agency, carrier
):
    preview = _preview(staff_client, _csv([unit_row(1)]))
    colleague = Client()
    colleague.force_login(staff_member([agency], groups, "colleague"))
    answer = _confirm(colleague, preview)
    assert any("incomplete or altered: nothing was imported" in m for m in _messages(answer))
    assert not Vehicle.objects.exists()
    assert "Import finished: 1 new" in page_text(_confirm(staff_client, preview))
