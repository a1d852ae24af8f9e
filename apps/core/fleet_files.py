"""A fleet file as the back-office reads it (apps.core.admin_import): its encodings, and the
limits of one import.

An import runs every row through the create service in one transaction, dry run included; on
SQLite that transaction holds every other writer (a token, a rate-limit counter) for as long
as it lasts, and a 75,000-row file made the whole API answer 503 for minutes. So a file has a
size limit (`IMPORT_MAX_BYTES`, checked on the upload form, before it is stored or read) and a
row limit (`IMPORT_MAX_ROWS`, checked once the file is read, before a transaction opens or a
row is looked at); a larger fleet is split into several files, or sent through the API.
"""

from __future__ import annotations

import codecs
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


def rows_problem(rows: int) -> str | None:
    """Why a file of `rows` data rows is refused before a row is imported, or None."""
    limit = settings.IMPORT_MAX_ROWS
    if rows <= limit:
        return None
    return f"The file has {rows:,} rows; an import takes at most {limit:,} rows. {SPLIT}"


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
    """CSV in any of the encodings `spreadsheet_text` reads."""

    def create_dataset(self, in_stream, **kwargs):
        if isinstance(in_stream, bytes):
            in_stream = spreadsheet_text(in_stream)
        return super().create_dataset(in_stream, **kwargs)


class SpreadsheetXLSX(XLSX):
    """The first sheet of an XLSX file, a formula cell read as a `Formula` (the library reads
    the value the file cached for it, None in a file openpyxl wrote)."""

    def create_dataset(self, in_stream, **kwargs):
        book = openpyxl.load_workbook(io.BytesIO(in_stream), read_only=True, data_only=False)
        rows = book.active.rows
        dataset = tablib.Dataset()
        dataset.headers = [cell.value for cell in next(rows, ())]
        for row in rows:
            dataset.append(
                [Formula(cell.value) if cell.data_type == "f" else cell.value for cell in row]
            )
        return dataset
