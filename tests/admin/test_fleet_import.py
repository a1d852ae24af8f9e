"""Fleet files in the back-office: import (dry-run preview, then confirm) and export.

Every row goes through vehicle_create / driver_create (audit included), one bad row means
nothing is saved, errors speak the staff's language, and a DOT outside the staff member's
agencies is unknown to them.
"""

from __future__ import annotations

import csv
import html
import io

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.admin_import import YearWidget
from apps.drivers.models import Driver
from apps.vehicles.models import Vehicle
from tests.conftest import staff_member
from tests.factories import ClientFactory, DriverFactory, VehicleFactory

pytestmark = pytest.mark.django_db

HEADER = ["dot", "unit", "vin", "year", "make", "unit_type", "plate", "plate_state", "status"]
GOOD = [
    ["1234567", "501", "1FUJGLDR7CLBP0501", "2021", "Freightliner", "Tractor", "TX-501A", "TX", ""],
    ["1234567", "502", "1XKYDP9X5MJ440502", "2022", "kenworth", "Tractor", "TX-502A", "Texas", ""],
    ["1234567", "T-503", "1GRAA0621KB120503", "2019", "Great Dane", "Trailer", "", "", "Active"],
]


@pytest.fixture
def carrier(agency):
    return ClientFactory(agency=agency, client_name="Lone Star Freight LLC", dot="1234567")


def _csv(rows, header=HEADER) -> SimpleUploadedFile:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return SimpleUploadedFile("fleet.csv", out.getvalue().encode(), content_type="text/csv")


def _xlsx(rows, header=HEADER) -> SimpleUploadedFile:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return SimpleUploadedFile("fleet.xlsx", buffer.getvalue())


def _preview(browser, upload, *, fmt=0, model="vehicles/vehicle"):
    return browser.post(
        f"/admin/{model}/import/", {"format": str(fmt), "import_file": upload, "resource": "0"}
    )


def _confirm(browser, preview, *, model="vehicles/vehicle"):
    form = preview.context["confirm_form"]
    return browser.post(f"/admin/{model}/process_import/", form.initial, follow=True)


def test_a_clean_csv_is_previewed_then_imported_through_the_service(staff_client, carrier):
    preview = _preview(staff_client, _csv(GOOD))
    assert preview.status_code == 200
    page = preview.content.decode()
    assert "1FUJGLDR7CLBP0501" in page and preview.context["confirm_form"] is not None
    assert not Vehicle.objects.filter(client=carrier).exists()  # a dry run saved nothing

    done = _confirm(staff_client, preview)
    assert done.status_code == 200
    units = {v.unit: v for v in Vehicle.objects.filter(client=carrier)}
    assert sorted(units) == ["501", "502", "T-503"]
    assert units["502"].make.name == "Kenworth" and units["502"].license_plate_state.code == "TX"
    assert units["T-503"].license_plate_state is None and units["T-503"].status == "ACTIVE"
    # the service ran: it stamps created_by, and the audit trail has a creation by staff
    assert units["501"].created_by.username == "staff"
    record = Vehicle.history.filter(id=units["501"].pk).get()
    assert record.history_type == "+" and record.history_user.username == "staff"


def test_xlsx_with_numbers_as_numbers_imports(staff_client, carrier):
    rows = [[1234567, 601, "1FUJGLDR7CLBP0601", 2021, "Volvo", "Tractor", "", "", ""]]
    preview = _preview(staff_client, _xlsx(rows), fmt=1)
    assert preview.context["confirm_form"] is not None, preview.content.decode()[-3000:]
    _confirm(staff_client, preview, model="vehicles/vehicle")
    unit = Vehicle.objects.get(client=carrier)
    assert unit.unit == "601" and unit.model_year == 2021
    # a blank cell (plate) and a column the file lacks (owner) are both empty text
    assert unit.license_plate == "" and unit.owner == "" and unit.garaging_address == ""


def test_a_dot_with_leading_zeros_finds_its_client(staff_client, carrier):
    rows = [["01234567", "701", "1FUJGLDR7CLBP0701", "2021", "Volvo", "Tractor", "", "", ""]]
    preview = _preview(staff_client, _csv(rows))
    assert preview.context["confirm_form"] is not None, preview.content.decode()[-3000:]
    _confirm(staff_client, preview)
    assert Vehicle.objects.get(client=carrier).unit == "701"


def test_bad_rows_are_named_in_staff_terms_and_nothing_is_saved(staff_client, carrier, rival):
    VehicleFactory(client=carrier, serial_number="1XKYDP9X5MJ449999", unit="OLD")
    rows = [
        *GOOD,
        ["1234567", "504", "1FUJGLDR7CLBP0504", "2021", "Frieghtliner", "Tractor", "", "", ""],
        ["1234567", "505", "1FUJGLDR7CLBP05O5", "2021", "Volvo", "Tractor", "", "", ""],
        ["1234567", "506", "1XKYDP9X5MJ449999", "2021", "Volvo", "Tractor", "", "", ""],
        ["1234567", "507", "1FUJGLDR7CLBP0501", "2021", "Volvo", "Tractor", "", "", ""],
        ["1234567", "508", "1FUJGLDR7CLBP0508", "2021", "Volvo", "Tractor", "X1", "ZZ", ""],
        [rival.dot, "509", "1FUJGLDR7CLBP0509", "2021", "Volvo", "Tractor", "", "", ""],
        ["1234567", "510", "1FUJGLDR7CLBP0510", "20x1", "Volvo", "Tractor", "", "", ""],
        ["1234567", "511", "1FUJGLDR7CLBP0511", "2021", "Volvo", "Tractor", "\u0416-511", "", ""],
    ]
    preview = _preview(staff_client, _csv(rows))
    page = preview.content.decode()
    assert preview.context.get("confirm_form") is None  # nothing to confirm
    assert "Unknown make “Frieghtliner”" in page
    assert (
        "Bad VIN “1FUJGLDR7CLBP05O5”. A VIN is 17 characters of A-H, J-N, P, R-Z and 0-9." in page
    )
    assert page.count("already has a vehicle with VIN") == 2  # in the client, and in the file
    assert "Unknown state “ZZ”" in page
    assert f"No client with DOT {rival.dot} in your agencies" in page
    assert "is not a year like 2021" in page
    assert "A plate is written with the letters A-Z and the digits 0-9" in page
    assert Vehicle.objects.filter(client=carrier).count() == 1


def test_a_malformed_dot_is_refused_as_the_api_refuses_it(staff_client, carrier):
    """A DOT cell that is no DOT says why, in the words a DOT parameter gets; a well-formed DOT
    of no client of the staff member's is unknown to them. Leading zeros are dropped first."""
    rows = [
        ["12a", "601", "1FUJGLDR7CLBP0601", "2021", "Volvo", "Tractor", "", "", ""],
        ["123456789", "602", "1FUJGLDR7CLBP0602", "2021", "Volvo", "Tractor", "", "", ""],
        ["0000", "603", "1FUJGLDR7CLBP0603", "2021", "Volvo", "Tractor", "", "", ""],
        ["7654320", "604", "1FUJGLDR7CLBP0604", "2021", "Volvo", "Tractor", "", "", ""],
        ["001234567", "605", "1FUJGLDR7CLBP0605", "2021", "Volvo", "Tractor", "", "", ""],
    ]
    preview = _preview(staff_client, _csv(rows))
    page = html.unescape(preview.content.decode())
    assert preview.context.get("confirm_form") is None
    rule = "A DOT number is 1 to 8 digits, not all zeros (leading zeros are not counted)."
    for dot in ("12a", "123456789", "0000"):
        assert f"'{dot}' is not a DOT number. {rule}" in page, dot
        assert f"No client with DOT {dot} " not in page, dot
    assert "No client with DOT 7654320 in your agencies." in page
    assert page.count("is not a DOT number") == 3 and page.count("No client with DOT") == 1


def test_a_missing_column_is_named(staff_client, carrier):
    preview = _preview(staff_client, _csv([["1234567", "1"]], header=["dot", "unit"]))
    page = preview.content.decode()
    assert "The file has no column vin, year, make, unit_type" in page
    assert "Traceback" not in page and "Nothing was imported" in page
    assert preview.context.get("confirm_form") is None


def test_the_confirmed_run_is_all_or_nothing(staff_client, carrier):
    """A row that turns bad between preview and confirm: the whole file is refused."""
    preview = _preview(staff_client, _csv(GOOD))
    VehicleFactory(client=carrier, serial_number=GOOD[2][2], unit="typed by hand")
    done = _confirm(staff_client, preview)
    assert "Nothing was imported" in done.content.decode()
    assert Vehicle.objects.filter(client=carrier).count() == 1


def test_staff_cannot_import_into_another_agencys_client(client, groups, other_agency, carrier):
    client.force_login(staff_member([other_agency], groups, "rival-staff"))
    preview = _preview(client, _csv(GOOD))
    assert "No client with DOT 1234567 in your agencies" in preview.content.decode()
    assert preview.context.get("confirm_form") is None
    assert not Vehicle.objects.filter(client=carrier).exists()


def test_viewers_may_export_but_not_import(client, groups, agency, carrier):
    client.force_login(staff_member([agency], groups, "viewer-staff", group=1))
    assert client.get("/admin/vehicles/vehicle/import/").status_code == 403


def test_export_writes_the_import_columns_and_only_visible_units(staff_client, carrier, rival):
    VehicleFactory(client=carrier, unit="101", serial_number="1FUJGLDR7CLBP8834")
    VehicleFactory(client=rival, unit="R1", serial_number="4V4NC9EH5LN223344")
    columns = [
        "dot",
        "unit",
        "vin",
        "year",
        "make",
        "unit_type",
        "plate",
        "plate_state",
        "owner",
        "garaging_address",
        "stated_value",
        "status",
    ]
    form = {"format": "0", "resource": "0", **{f"vehicleresource_{c}": "on" for c in columns}}
    response = staff_client.post("/admin/vehicles/vehicle/export/", form)
    body = response.content.decode()
    rows = list(csv.reader(io.StringIO(body)))
    assert rows[0] == columns
    assert [r[2] for r in rows[1:]] == ["1FUJGLDR7CLBP8834"]
    assert rows[1][0] == "1234567" and rows[1][4] == "Kenworth"


DRIVER_COLUMNS = ["dot", "first_name", "last_name", "driver_type"]
DRIVER_EXPORT = {
    "format": "0",
    "resource": "0",
    **{f"driverresource_{c}": "on" for c in DRIVER_COLUMNS},
}


def test_an_export_of_a_selection_writes_the_visible_records_of_it(staff_client, carrier, rival):
    mine = DriverFactory(client=carrier, first_name="Mine")
    theirs = DriverFactory(client=rival, first_name="Theirs")
    response = staff_client.post(
        "/admin/drivers/driver/export/", {**DRIVER_EXPORT, "export_items": [mine.pk, theirs.pk]}
    )
    assert response["Content-Disposition"].startswith("attachment")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows == [DRIVER_COLUMNS, ["1234567", "Mine", mine.last_name, "Company Driver"]]


@pytest.mark.parametrize("selection", ["theirs", "unknown", "abc"])
def test_an_export_of_a_selection_of_no_visible_record_says_nothing_was_done(
    staff_client, carrier, rival, selection
):
    """Another agency's driver, an id no driver has and a value no id is answer the same."""
    theirs = DriverFactory(client=rival)
    items = {"theirs": theirs.pk, "unknown": theirs.pk + 1000, "abc": "abc"}[selection]
    response = staff_client.post(
        "/admin/drivers/driver/export/", {**DRIVER_EXPORT, "export_items": [items]}
    )
    assert response.status_code == 302 and "Content-Disposition" not in response
    assert response["Location"] == "/admin/drivers/driver/"
    page = staff_client.get(response["Location"])
    assert [str(m) for m in page.context["messages"]] == [
        "Nothing was done: none of the selected records is one you can see."
    ]


def test_drivers_import_with_dates_states_and_cities(staff_client, carrier):
    header = [
        "dot",
        "first_name",
        "last_name",
        "driver_type",
        "date_of_birth",
        "license_number",
        "license_state",
        "license_type",
        "city",
        "state",
    ]
    rows = [
        ["1234567", "Maria", "Gonzalez", "Owner Operator", "1985-04-12", "TX1", "TX",
         "CDL Class A", "Dallas", "TX"],
        ["1234567", "James", "Walker", "Company Driver", "07/30/1979", "TX2", "Texas", "", "", ""],
    ]  # fmt: skip
    preview = _preview(staff_client, _csv(rows, header=header), model="drivers/driver")
    assert preview.context["confirm_form"] is not None, preview.content.decode()[-3000:]
    _confirm(staff_client, preview, model="drivers/driver")
    maria = Driver.objects.get(client=carrier, first_name="Maria")
    assert maria.city.name == "Dallas" and maria.dl_type.name == "CDL Class A"
    assert str(maria.date_of_birth) == "1985-04-12"
    bad = [["1234567", "Ann", "Lee", "Pilot", "31/12/1980", "", "", "", "Gotham", "TX"]]
    page = _preview(staff_client, _csv(bad, header=header), model="drivers/driver").content.decode()
    assert "Unknown driver type “Pilot”" in page
    assert "Expected a date as YYYY-MM-DD or MM-dd-yyyy, or M/D/YYYY as a spreadsheet" in page
    assert "Unknown city “Gotham” in TX" in page


def test_an_imported_licence_number_is_stored_as_the_api_stores_it(staff_client, api, carrier):
    # One rule (drivers.services, normalize_license_number) for every writer: a fleet file's
    # " tx77 " is stored TX77 like the API's, so the licenseNumber filter finds both drivers.
    body = {
        "clientId": carrier.id,
        "firstName": "Ann",
        "lastName": "Lee",
        "driverType": "Owner Operator",
    }
    by_api = api.post("/v1/drivers", {**body, "licenseNumber": "Tx77"}, format="json")
    assert by_api.status_code == 201, by_api.content
    header = ["dot", "first_name", "last_name", "driver_type", "license_number"]
    rows = [["1234567", "Bo", "Diaz", "Company Driver", " tx77 "]]
    preview = _preview(staff_client, _csv(rows, header=header), model="drivers/driver")
    assert preview.context["confirm_form"] is not None, preview.content.decode()[-3000:]
    _confirm(staff_client, preview, model="drivers/driver")
    imported = Driver.objects.get(client=carrier, first_name="Bo")
    detail = api.get(f"/v1/drivers/{imported.id}")
    assert detail.status_code == 200 and detail.json()["licenseNumber"] == "TX77"
    found = api.get("/v1/drivers?licenseNumber=tX77").json()["results"]
    assert sorted(d["id"] for d in found) == sorted([by_api.json()["id"], imported.id])
    assert {d["licenseNumber"] for d in found} == {"TX77"}


@pytest.mark.parametrize("year", ["\u0662\u0660\u0662\u0661", "20\u00b2\u00b9", " 2021x"])
def test_a_year_is_ascii_digits_as_every_number_taken_from_outside(year):
    with pytest.raises(ValueError, match="is not a year like 2021"):
        YearWidget().clean(year)
    assert YearWidget().clean(" 2021 ") == 2021


def test_confirming_an_imported_file_again_says_so(staff_client, carrier):
    # A second click on Confirm, or the browser's Back and Confirm: the file was imported and
    # is no longer kept. It answered 500; nothing was written twice.
    preview = _preview(staff_client, _csv(GOOD))
    assert "Import finished" in _confirm(staff_client, preview).content.decode()
    again = _confirm(staff_client, preview)
    assert again.status_code == 200
    assert "imported already" in again.content.decode()
    assert Vehicle.objects.filter(client=carrier).count() == len(GOOD)


def test_export_neutralises_formulas_and_imports_them_back_as_typed(staff_client, carrier):
    # Text an API user wrote can be a spreadsheet formula; staff opening the export would run it.
    unit = VehicleFactory(
        client=carrier,
        unit='=HYPERLINK("http://evil","x")',
        serial_number="1FUJGLDR7CLBP8834",
        owner="=cmd|' /C calc'!A0",
        garaging_address="@SUM(1+1)",
    )
    columns = ["dot", "unit", "vin", "year", "make", "unit_type", "owner", "garaging_address"]
    form = {"format": "0", "resource": "0", **{f"vehicleresource_{c}": "on" for c in columns}}
    body = staff_client.post("/admin/vehicles/vehicle/export/", form).content.decode()
    [row] = list(csv.reader(io.StringIO(body)))[1:]
    assert row[1] == "'" + unit.unit and row[6] == "'" + unit.owner and row[7] == "'@SUM(1+1)"
    form["format"] = "1"
    sheet = openpyxl.load_workbook(
        io.BytesIO(staff_client.post("/admin/vehicles/vehicle/export/", form).content)
    ).active
    assert all(cell.data_type != "f" for line in sheet.iter_rows() for cell in line)
    # The exported file imports back as typed: the quote is taken off again.
    unit.delete()
    row[2] = "1FUJGLDR7CLBP8835"
    lines = io.StringIO()
    csv.writer(lines).writerows([columns, row])
    upload = SimpleUploadedFile("fleet.csv", lines.getvalue().encode())
    assert (
        "Import finished" in _confirm(staff_client, _preview(staff_client, upload)).content.decode()
    )
    imported = Vehicle.objects.get(serial_number="1FUJGLDR7CLBP8835")
    assert (imported.unit, imported.owner) == (
        '=HYPERLINK("http://evil","x")',
        "=cmd|' /C calc'!A0",
    )


@pytest.mark.parametrize("encoding", ["cp1252", "utf-16", "utf-8-sig"])
def test_a_csv_saved_by_a_spreadsheet_in_its_encoding_imports(staff_client, carrier, encoding):
    # Excel's plain "CSV" on Windows is Windows-1252, its "Unicode text" UTF-16 with a byte
    # order mark: both were refused with the library's "UnicodeDecodeError".
    columns = ["dot", "unit", "vin", "year", "make", "unit_type", "owner"]
    row = ["1234567", "L-1", "1FUJGLDR7CLBP0777", "2021", "Freightliner", "Tractor", "José Peña"]
    lines = io.StringIO()
    csv.writer(lines).writerows([columns, row])
    upload = SimpleUploadedFile("fleet.csv", lines.getvalue().encode(encoding))
    done = _confirm(staff_client, _preview(staff_client, upload))
    assert "Import finished" in done.content.decode()
    assert Vehicle.objects.get(serial_number="1FUJGLDR7CLBP0777").owner == "José Peña"


def test_a_row_with_a_refused_cell_lists_its_other_cells_errors_too(staff_client, carrier):
    """docs/architecture.md: a refused file lists every row's errors by row and column, so one
    upload shows them all: a status no unit has and a year before 1900 in one row are both
    named, each as it is alone."""
    row = ["1234567", "Y", "1M2AX07C0XM000062", "1899", "Volvo", "Tractor", "", "", "BOGUS"]
    alone = {"status": [*row[:3], "2021", *row[4:]], "year": [*row[:8], ""]}
    pages = {
        name: _preview(staff_client, _csv([cells])).content.decode()
        for name, cells in alone.items()
    }
    assert "Unknown status “BOGUS”" in pages["status"]
    assert "greater than or equal to 1900" in pages["year"]
    both = _preview(staff_client, _csv([row]))
    page = both.content.decode()
    assert both.context.get("confirm_form") is None
    assert "Unknown status “BOGUS”" in page
    assert "greater than or equal to 1900" in page
    assert Vehicle.objects.filter(client=carrier).count() == 0


def test_a_driver_row_with_a_refused_cell_lists_its_other_cells_errors_as_the_service_would(
    staff_client, carrier
):
    """The drivers' checks run on the values as driver_create stores them: a licence number of
    40 characters once trimmed is no error, beside an unknown driver type and a bad email."""
    header = ["dot", "first_name", "last_name", "driver_type", "license_number", "email"]
    licence = "  " + "d" * 40 + "  "  # 44 as typed, 40 as stored: within the column's 40
    rows = [["1234567", "Ann", "Lee", "Pilot", licence, "not-an-email"]]
    preview = _preview(staff_client, _csv(rows, header=header), model="drivers/driver")
    page = preview.content.decode()
    assert preview.context.get("confirm_form") is None
    assert "Unknown driver type “Pilot”" in page
    assert "Enter a valid email address." in page
    assert "Ensure this value has at most 40 characters" not in page
    assert not Driver.objects.filter(client=carrier).exists()
