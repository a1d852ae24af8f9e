"""A fleet file as the back-office reads it (apps.core.admin_import): its encodings, and the
limits of one import.

An import runs every row through the create service in one transaction, dry run included; on
SQLite that transaction holds every other writer (a token, a rate-limit counter) for as long
as it lasts, and a 75,000-row file made the whole API answer 503 for minutes. So a file has a
size limit (`IMPORT_MAX_BYTES`, checked on the upload form, before it is stored or read) and a
row limit (`IMPORT_MAX_ROWS`, checked once the file is read, before a transaction opens or a
row is looked at); a larger fleet is split into several files, or sent through the API.

Reading an XLSX stops one row past the row limit, and reads no column past the header's: a
file of a few kilobytes may declare 16,384 columns or tens of thousands of rows (a lone cell at
A20000, rows Excel keeps only formatted), and read whole it took a minute and hundreds of
megabytes before it was refused. A blank row (nothing but empty cells: a CSV line of only
commas, a row only formatted) is no row of the file, in the count as in the import.
"""

from __future__ import annotations

import codecs
import csv
import io

import openpyxl
import tablib
from django.conf import settings
from import_export.formats.base_formats import CSV, XLSX

from apps.core.parsers import text_problem

SPLIT = "Split the file, or use the API."


class ImportFileRefused(Exception):
    """The file as a whole cannot be imported; its message says why, in the staff's words."""


def size_problem(size: int) -> str | None:
    """Why a file of `size` bytes is refused before it is read, or None."""
    limit = settings.IMPORT_MAX_BYTES
    if size <= limit:
        return None
    return f"The file is {size:,} bytes; an import takes at most {limit:,} bytes. {SPLIT}"


def rows_problem(rows: int, *, more: bool = False) -> str | None:
    """Why a file of `rows` data rows (`more`: at least that many, its reading stopped there)
    is refused before a row is imported, or None."""
    limit = settings.IMPORT_MAX_ROWS
    if rows <= limit:
        return None
    count = f"more than {limit:,}" if more else f"{rows:,}"
    return f"The file has {count} rows; an import takes at most {limit:,} rows. {SPLIT}"


class FleetDataset(tablib.Dataset):
    """A fleet file's data rows, its blank rows left out; `cut` when its reading stopped one
    row past IMPORT_MAX_ROWS (the file has more rows still, how many is not known).

    `sheet_rows` holds each data row's number in the spreadsheet (the header is row 1, a blank
    row keeps its number), the row number staff find it at in the file they opened: the
    import's refusals name a row by it (`ServiceResource.import_data`). Counted among the rows
    kept, a row after a blank one was named by a number the spreadsheet gives another."""

    cut = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sheet_rows: list[int] = []

    def append_sheet_row(self, row, sheet_row: int) -> None:
        """A data row, and the spreadsheet's number for it."""
        self.append(row)
        self.sheet_rows.append(sheet_row)

    def sheet_row(self, number: int) -> int:
        """The spreadsheet's number for the `number`th data row (from 1)."""
        return self.sheet_rows[number - 1] if number <= len(self.sheet_rows) else number


def is_blank(row) -> bool:
    """Whether a row holds nothing: every cell empty, or spaces only."""
    return all(value is None or (isinstance(value, str) and not value.strip()) for value in row)


FORMULA_MESSAGE = "This cell holds a formula, not a value: type the value."


class Formula(str):
    """An XLSX cell holding a formula, as its text (`=HYPERLINK(...)`). Its value is whatever
    the spreadsheet last computed, if it saved one at all (openpyxl does not): read as a value,
    it imported an empty owner, or refused a unit as blank."""


def cell_problem(value) -> str | None:
    """Why no column takes this cell, whatever it names, or None: a formula (`Formula`), or
    text that no field of the API may hold either (a NUL, a lone surrogate), refused with the
    API's own message (apps.core.parsers.text_problem), so an import never stores what the API
    would refuse."""
    if isinstance(value, Formula):
        return FORMULA_MESSAGE
    if isinstance(value, str):
        return text_problem(value)
    return None


def spreadsheet_text(data: bytes) -> str:
    """A CSV file's text as spreadsheets save it: UTF-16 with its byte order mark (Excel's
    "Unicode text"), UTF-8 with or without one ("CSV UTF-8"), else Windows-1252 (Excel's plain
    "CSV" on Windows), or Latin-1 when a byte is none of those. The document uploads accept the
    same encodings."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:  # one of its five unassigned bytes
        return data.decode("latin-1")


class SpreadsheetCSV(CSV):
    """CSV in any of the encodings `spreadsheet_text` reads, its blank lines left out (a line
    of only commas, as a spreadsheet saves an emptied row, as well as an empty one), each row
    numbered as a spreadsheet opening the file numbers it: one row per CSV record, the header
    row 1, a blank row counted (a record may span lines: a quoted cell holding a line break).

    Read as the library's CSV reads it (tablib: `csv.reader`, a short row filled with empty
    cells, a long one refused), which drops an empty line before the numbering could see it."""

    def create_dataset(self, in_stream, **kwargs):
        if isinstance(in_stream, bytes):
            in_stream = spreadsheet_text(in_stream)
        kwargs.setdefault("delimiter", ",")
        records = csv.reader(io.StringIO(in_stream, newline=""), **kwargs)
        header = next(records, None)
        dataset = FleetDataset(headers=header)
        for sheet_row, record in enumerate(records, start=2):
            if is_blank(record):
                continue
            dataset.append_sheet_row(record + [""] * (dataset.width - len(record)), sheet_row)
        return dataset


class SpreadsheetXLSX(XLSX):
    """The first sheet of an XLSX file, a formula cell read as a `Formula` (the library reads
    the value the file cached for it, None in a file openpyxl wrote), each row numbered as the
    sheet numbers it (`FleetDataset.sheet_rows`).

    Its columns are the header's (up to its last named one), whatever the sheet declares; a
    blank row is skipped, a short one is filled with empty cells, and reading stops one row
    past IMPORT_MAX_ROWS (`FleetDataset.cut`)."""

    def create_dataset(self, in_stream, **kwargs):
        book = openpyxl.load_workbook(io.BytesIO(in_stream), read_only=True, data_only=False)
        try:
            sheet = book.active
            headers = [cell.value for cell in next(sheet.iter_rows(max_row=1), ())]
            while headers and headers[-1] is None:
                headers.pop()
            dataset = FleetDataset(headers=headers)
            if not headers:
                return dataset
            limit = settings.IMPORT_MAX_ROWS
            rows = sheet.iter_rows(min_row=2, max_col=len(headers))  # a missing row as blank
            for sheet_row, cells in enumerate(rows, start=2):
                row = [Formula(c.value) if c.data_type == "f" else c.value for c in cells]
                if is_blank(row):
                    continue
                dataset.append_sheet_row(row, sheet_row)
                if len(dataset) > limit:
                    dataset.cut = True
                    break
            return dataset
        finally:
            book.close()
