"""Fleet files in the back-office: import and export with django-import-export.

A carrier's unit or driver list arrives as a spreadsheet. Staff upload it (CSV or XLSX), see
a dry-run preview where every bad row says what is wrong in their words (unknown make, bad
VIN, duplicate VIN in the client, state unknown), and confirm. These rules hold:

- every row is created by the app's service (`vehicle_create`, `driver_create`), never by
  the ORM, so the business rules, the audit trail and the change events are the API's;
- all or nothing: one bad row and nothing is saved (the preview offers no confirm button,
  and the confirmed run rolls back whole if a row fails then);
- scoped: a row names its client by DOT, looked up only among the staff member's agencies'
  live clients, so nobody can import into another agency's client;
- bounded: a file of more rows or bytes than the settings allow is refused before a row is
  imported (apps.core.fleet_files: an XLSX is read no further than one row past the limit),
  since the whole import is one transaction;
- once: a previewed file is imported by one confirm, however many arrive at once on however
  many nodes (`ImportFileStorage.claim`).
- owned: a previewed file is confirmed by the staff member who uploaded it, by nobody else
  (`ImportFileStorage.owned_by`).

Exports write the same columns, so an exported file is a valid import file. An XLSX export
replaces each character XLSX cannot hold by U+FFFD (IMPORT_EXPORT_ESCAPE_ILLEGAL_CHARS_ON_EXPORT
in the settings); a CSV export holds them as they are.
"""

from __future__ import annotations

import datetime as dt
import re
from uuid import uuid4

from django.contrib import messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ERROR_FLAG
from django.core.cache import cache
from django.core.exceptions import (
    BadRequest,
    ObjectDoesNotExist,
    PermissionDenied,
    ValidationError,
)
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_POST
from import_export import fields, resources, widgets
from import_export.admin import ImportExportMixin
from import_export.formats.base_formats import CSV, XLSX
from import_export.forms import ConfirmImportForm, ImportForm
from import_export.results import Result
from import_export.tmp_storages import CacheStorage
from rest_framework import serializers
from rest_framework.exceptions import APIException

from apps.core.admin import nothing_done
from apps.core.admin_keys import visible_keys
from apps.core.dates import DATE_MESSAGE, date_from_text, iso_text
from apps.core.fleet_files import (
    ImportFileRefused,
    SpreadsheetCSV,
    SpreadsheetXLSX,
    cell_problem,
    rows_problem,
    size_problem,
)
from apps.core.money import format_money, ungrouped
from apps.core.params import is_ascii_int
from apps.core.serializers import StrictMoneyField


def cell_text(value) -> str:
    """A spreadsheet cell as text (XLSX numbers without their ".0")."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # XLSX hands numbers over as floats: 1234567.0
    return str(value).strip()


# What a spreadsheet reads as a formula at the start of a cell (CSV injection: a unit named
# `=HYPERLINK(...)` through the API runs when staff open the export): such a character, after
# any number of `'`. An export writes text starting so with one more leading `'` (shown as
# text, not run), and an import takes exactly one `'` off text starting so: of any text,
# `imported_text(exported_text(text)) == text`, so an exported file imports back what it was
# exported from (`'=1+1` stored is exported `''=1+1`, imported `'=1+1`). A cell typed
# `'=1+1` is read as the export writes `=1+1`: type `''=1+1` to store `'=1+1`.
FORMULA_START = re.compile(r"'*[=+\-@\t\r]")


def exported_text(text: str) -> str:
    """Text as the export writes it: neutralised if a spreadsheet would run it."""
    return f"'{text}" if FORMULA_START.match(text) else text


def imported_text(text: str) -> str:
    """A cell's text as stored: the `'` an export adds (`exported_text`) taken off."""
    return text[1:] if text.startswith("'") and FORMULA_START.match(text, 1) else text


class TextWidget(widgets.Widget):
    """Text as typed (the export's formula `'` taken off: `imported_text`); a number cell of an
    XLSX file (a licence number) without its ".0". Rendered as stored: the import's preview
    shows it so; the export neutralises it (`ServiceResource.export_field`)."""

    def clean(self, value, row=None, **kwargs):
        return imported_text(cell_text(value))

    def render(self, value, obj=None, **kwargs):
        return value or ""


class LookupWidget(widgets.Widget):
    """A master-data row named in the file (by name, or code), from one query per import."""

    def __init__(self, noun: str, model, *, codes: bool = False, render_attr: str = "name"):
        super().__init__()
        self.noun, self.model, self.codes, self.render_attr = noun, model, codes, render_attr
        self._table: dict | None = None

    def reset(self) -> None:
        self._table = None

    def table(self) -> dict:
        if self._table is None:
            self._table = {}
            for obj in self.model.objects.all():
                self._table[obj.name.strip().lower()] = obj
                if self.codes:
                    self._table[obj.code.strip().lower()] = obj
        return self._table

    def clean(self, value, row=None, **kwargs):
        text = cell_text(value)
        if not text:
            return None
        found = self.table().get(text.lower())
        if found is None:
            raise ValueError(f"Unknown {self.noun} “{text}”.")
        return found

    def render(self, value, obj=None, **kwargs):
        return "" if value is None else getattr(value, self.render_attr)


class ChoiceWidget(widgets.Widget):
    """A status written as staff write it ("Out of service", "ACTIVE", "active")."""

    def __init__(self, noun: str, choices, default: str):
        super().__init__()
        self.noun, self.choices, self.default = noun, choices, default

    def clean(self, value, row=None, **kwargs):
        text = cell_text(value)
        if not text:
            return self.default
        key = re.sub(r"[\s-]+", "_", text.upper())
        for code, label in self.choices:
            if key in (code, re.sub(r"[\s-]+", "_", str(label).upper())):
                return code
        names = ", ".join(str(label) for _, label in self.choices)
        raise ValueError(f"Unknown {self.noun} “{text}” (one of: {names}).")

    def render(self, value, obj=None, **kwargs):
        return value or ""


class YearWidget(widgets.Widget):
    def clean(self, value, row=None, **kwargs):
        text = cell_text(value)
        if not text:
            return None
        if not is_ascii_int(text):  # str.isdigit() also takes "²" and other scripts' digits
            raise ValueError(f"The model year “{text}” is not a year like 2021.")
        return int(text)

    def render(self, value, obj=None, **kwargs):
        return "" if value is None else str(value)


class MoneyWidget(widgets.Widget):
    """An amount judged as the API judges money (`StrictMoneyField`: plain decimal text, two
    places at most, its digits, its messages), once a spreadsheet's thousands separators are
    taken off (`ungrouped`: 1,234.50, never 12,34); an empty cell is no amount. What the API
    refuses is refused on the cell's row and column with the API's message: rounded or read as
    Python reads a number, 1234.567 was stored as 1234.57, 12,34 as 1234.00 and 1e3 as
    1000.00."""

    field = StrictMoneyField()

    def clean(self, value, row=None, **kwargs):
        text = cell_text(value)
        if not text:
            return None
        try:
            return self.field.run_validation(ungrouped(text))
        except serializers.ValidationError as exc:
            raise ValueError(" ".join(exc.detail)) from exc

    def render(self, value, obj=None, **kwargs):
        return "" if value is None else format_money(value)


# A date as a spreadsheet writes it in a CSV (Excel's US short date: 1/31/2026, 01/31/2026).
SPREADSHEET_DAY = re.compile(r"([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})")
DAY_MESSAGE = f"{DATE_MESSAGE[:-1]}, or M/D/YYYY as a spreadsheet writes it."


class DayWidget(widgets.Widget):
    """A date in the API's forms, exactly as the API reads them (`date_from_text`: YYYY-MM-DD
    or MM-dd-yyyy, ASCII digits, zero-padded), as a spreadsheet writes one (M/D/YYYY), or an
    XLSX date cell. strptime read 1990-3-1 and other scripts' digits, which the API refuses."""

    def clean(self, value, row=None, **kwargs):
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        text = cell_text(value)
        if not text:
            return None
        day = date_from_text(text)
        spreadsheet = SPREADSHEET_DAY.fullmatch(text) if day is None else None
        if spreadsheet:
            month, day_of_month, year = spreadsheet.groups()
            day = date_from_text(f"{int(month):02d}-{int(day_of_month):02d}-{year}")
        if day is None:
            raise ValueError(DAY_MESSAGE)
        return day

    def render(self, value, obj=None, **kwargs):
        return "" if value is None else iso_text(value)


def column(name: str, widget, *, attribute: str | None = None) -> fields.Field:
    """A column of a fleet file: its header, its widget, the attribute it fills (by default
    the header's name)."""
    return fields.Field(attribute=attribute or name, column_name=name, widget=widget)


EMPTY_CELL = "This cell is empty; the column is required."


def row_value(instance, name: str):
    """What the row gave an attribute; None for a relation it left empty (reading a required
    one that is unset raises, which hid every other row's errors behind "Vehicle has no
    unit_type."): the service then refuses it on its column, as any other value."""
    try:
        return getattr(instance, name)
    except ObjectDoesNotExist:
        return None


class FleetResult(Result):
    """An import's result, its rows named by their number in the spreadsheet once
    `number_rows_as_in` has read them from the file (`FleetDataset.sheet_rows`): the library
    numbers the rows it was handed, the blank ones left out."""

    @staticmethod
    def sheet_row(number: int) -> int:
        return number

    def number_rows_as_in(self, dataset) -> None:
        self.sheet_row = getattr(dataset, "sheet_row", self.sheet_row)
        for row in (*self.invalid_rows, *self.error_rows):
            row.number = self.sheet_row(row.number)
            for error in getattr(row, "errors", ()):
                error.number = row.number

    def row_errors(self):
        return [(self.sheet_row(number), errors) for number, errors in super().row_errors()]


class ServiceResource(resources.ModelResource):
    """Rows become records through the app's create service, never through `save()`.

    Subclasses set `service` (keyword-only `(*, user, client_id, **fields)`), `service_fields` (the
    attributes handed to it) and `error_fields` (service error keys → the file's columns).
    """

    service = None
    fields_check = None  # the service's checks of some fields alone (`vehicle_fields_check`)
    service_fields: tuple[str, ...] = ()
    error_fields: dict[str, str] = {}
    required_columns: tuple[str, ...] = ()

    class Meta:
        use_transactions = True
        import_id_fields = ()
        skip_unchanged = False
        clean_model_instances = False  # the service validates, with its own messages

    def before_import(self, dataset, **kwargs):
        for field in self.get_import_fields():
            if hasattr(field.widget, "reset"):
                field.widget.reset()

    def file_problem(self, dataset) -> str | None:
        """Why the file as a whole cannot be imported, or None: too many rows, a column named
        twice (the last one was used, silently), a required column missing."""
        problem = rows_problem(len(dataset), more=getattr(dataset, "cut", False))
        if problem:
            return problem
        headers = list(dataset.headers or [])
        columns = [f.column_name for f in self.get_import_fields()]
        twice = [c for c in columns if headers.count(c) > 1]
        if twice:
            return f"The file has more than one column named {', '.join(twice)}; keep one of each."
        missing = [c for c in self.required_columns if c not in headers]
        if missing:
            return (
                f"The file has no column {', '.join(missing)}; the first row must name the "
                f"columns ({', '.join(columns)})."
            )
        return None

    def import_data(self, dataset, *args, **kwargs):
        """The file as a whole is checked first, before a transaction opens or a row is read:
        refused, it is one error (its text, as the page shows it) and no row is looked at.
        A refused row is named by its number in the spreadsheet (`FleetResult`)."""
        problem = self.file_problem(dataset)
        if problem:
            result = self.get_result_class()()
            result.total_rows = len(dataset)
            result.append_base_error(self.get_error_result_class()(ImportFileRefused(problem)))
            return result
        result = super().import_data(dataset, *args, **kwargs)
        result.number_rows_as_in(dataset)
        return result

    def get_result_class(self):
        return FleetResult

    def export_field(self, field, instance, **kwargs):
        """A cell of the export file: a text column's value a spreadsheet would run as a
        formula neutralised (`exported_text`). The import's preview renders each field as
        it is stored (the library's Diff calls `field.export`, not this), where it showed the
        export's `'` the import takes off."""
        value = super().export_field(field, instance, **kwargs)
        return exported_text(value) if isinstance(field.widget, TextWidget) else value

    def get_or_init_instance(self, instance_loader, row):
        return self.init_instance(row), True  # a file only ever adds records

    def column_of(self, key: str) -> str:
        key = self.error_fields.get(key, key)
        field = self.fields.get(key) or next(
            (f for f in self.fields.values() if f.attribute == key), None
        )
        return field.column_name if field is not None else key

    def by_column(self, exc: ValidationError) -> ValidationError:
        """Field errors (a widget's, the service's) under the file's column names, a required
        value the row left empty in the staff's words."""
        return ValidationError(
            {
                self.column_of(key): [
                    ValidationError(EMPTY_CELL, code="required")
                    if error.code in ("blank", "null")
                    else error
                    for error in errors
                ]
                for key, errors in exc.error_dict.items()
            }
        )

    def import_field(self, field, instance, row, is_m2m=False, **kwargs):
        """A cell through its column's widget, once it is a cell any column could take
        (`cell_problem`); refused, it is an error of its row and column."""
        problem = cell_problem(row.get(field.column_name))
        if problem:
            raise ValueError(problem)
        super().import_field(field, instance, row, is_m2m, **kwargs)

    def import_instance(self, instance, row, **kwargs):
        try:
            super().import_instance(instance, row, **kwargs)
        except ValidationError as exc:
            raise self.by_column(self.with_fields_errors(instance, exc)) from exc

    def with_fields_errors(self, instance, exc: ValidationError) -> ValidationError:
        """A row with a cell its widget refused never reaches the service: the service's own
        checks of the cells that were read (`fields_check`) are added, so one upload names
        every error of the row, each on its column."""
        read = {field.attribute for field in self.get_import_fields()} - set(exc.error_dict)
        given = {f: row_value(instance, f) for f in self.service_fields if f in read}
        try:
            type(self).fields_check(**given)
        except ValidationError as more:
            return ValidationError(more.update_error_dict(dict(exc.error_dict)))
        return exc

    def save_instance(self, instance, is_create, row, **kwargs):
        """Run the service for every row, dry run included: the transaction that wraps the
        whole import is rolled back after a dry run, so the preview sees exactly what the
        real run will (a VIN repeated in the file is refused on its second row)."""
        fields = {f: row_value(instance, f) for f in self.service_fields}
        try:
            saved = type(self).service(user=kwargs["user"], client_id=instance.client_id, **fields)
        except ValidationError as exc:
            if hasattr(exc, "error_dict"):
                raise self.by_column(exc) from exc
            raise
        except (APIException, PermissionDenied) as exc:
            detail = getattr(exc, "detail", None) or str(exc)
            raise ValidationError(str(detail)) from exc
        instance.pk = saved.pk
        instance._state.adding = False
        # The preview shows the row as the service stored it (a plate or licence number in
        # upper case), not as the cells gave it.
        for field in self.get_import_fields():
            setattr(instance, field.attribute, getattr(saved, field.attribute))


class ImportFileGone(Exception):
    """The previewed file is no longer kept: imported already (a second click on Confirm, the
    browser's Back), or expired."""


class ImportFileNotKept(Exception):
    """The cache did not keep the file just uploaded for its preview: Django's database cache
    drops a write that meets a locked SQLite database, and says nothing."""


class ImportFileStorage(CacheStorage):
    """The previewed file, kept in the shared cache between preview and confirm (any node may
    serve the confirm), and the claim a confirm takes on it before reading it.

    The file is its uploader's: its name starts with their pk (`owner`), and a confirm by
    anyone else is refused (`owned_by`); its random part alone, shown on the preview page, made
    it anyone's who saw it, another agency's staff with a client of the same DOT included."""

    CLAIM_PREFIX = "fleet-import-claim-"
    kept = True

    def __init__(self, owner=None, **kwargs):
        super().__init__(**kwargs)
        self.owner = owner

    def owned_by(self, user_pk) -> bool:
        return (self.name or "").partition("-")[0] == str(user_pk)

    def save(self, data):
        """Keep the file under a new name, its owner's; `cache.add` says whether it was kept (a
        name never used before is free), where `cache.set` says nothing. Not kept, `read`
        raises `ImportFileNotKept`."""
        self.name = self.name or f"{self.owner}-{uuid4().hex}"
        self.kept = bool(cache.add(self.CACHE_PREFIX + self.name, data, self.CACHE_LIFETIME))

    def read(self):
        if not self.kept:
            raise ImportFileNotKept
        data = super().read()
        if data is None:
            raise ImportFileGone
        return data

    def claim(self) -> bool:
        """Take the file for one confirm: True for the first to ask, False for every other, on
        any node, until `release`. `cache.add` is one atomic step on each cache the service
        runs on (Redis SET NX; the database table's primary key; the local-memory lock); the
        file's own presence is not, as a confirm reads it, imports it and only then removes it
        (three confirms at once imported a file three times)."""
        return cache.add(self.CLAIM_PREFIX + self.name, True, self.CACHE_LIFETIME)

    def release(self) -> None:
        cache.delete(self.CLAIM_PREFIX + self.name)


class FleetImportForm(ImportForm):
    """The upload step: a file over IMPORT_MAX_BYTES is refused here, before it is stored or
    read; a file kept is its `owner`'s, the staff member uploading it (`upload.owner`)."""

    def __init__(self, formats, resources, *, owner=None, **kwargs):
        super().__init__(formats, resources, **kwargs)
        self.owner = owner

    def clean_import_file(self):
        upload = self.cleaned_data["import_file"]
        problem = size_problem(upload.size)
        if problem:
            raise ValidationError(problem)
        upload.owner = self.owner
        return upload


class FleetConfirmForm(ConfirmImportForm):
    """The confirm step's hidden fields, each one the preview could have written: a format and
    a resource among the admin's (an altered one answered 500: IndexError, ValueError, or the
    stored CSV read as XLSX)."""

    def __init__(self, *args, formats=(), resources=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.counts = {"format": len(formats), "resource": len(resources)}

    def _index(self, name: str) -> str:
        value = self.cleaned_data.get(name) or ""
        if not is_ascii_int(value) or int(value) >= self.counts[name]:
            raise ValidationError("Not one of the choices the preview offered.")
        return value

    def clean_format(self) -> str:
        return self._index("format")

    def clean_resource(self) -> str:
        return self._index("resource")


# What the confirm step answers when it imports nothing.
ALTERED = (
    "This confirmation was incomplete or altered: nothing was imported. Upload the file again."
)
BEING_IMPORTED = (
    "This file is being imported, or was imported already: nothing more was imported. Upload "
    "it again to import it again."
)
GONE = (
    "This file was imported already, or its preview has expired: nothing more was imported. "
    "Upload it again to import it again."
)
REFUSED = "Nothing was imported: some rows were refused. Upload the file again to see which."
NOT_KEPT = "The server is busy: the file could not be kept for the preview; upload it again."


class StaffImportExportMixin(ImportExportMixin):
    """Import and export on a scoped changelist, for staff who may add (import) or view
    (export) the model, all or nothing."""

    import_formats = [SpreadsheetCSV, SpreadsheetXLSX]
    export_formats = [CSV, XLSX]
    tmp_storage_class = ImportFileStorage  # shared across nodes
    import_form_class = FleetImportForm
    confirm_form_class = FleetConfirmForm

    def has_import_permission(self, request):
        return self.has_add_permission(request)

    def has_export_permission(self, request):
        return self.has_view_permission(request)

    def get_import_data_kwargs(self, **kwargs):
        kwargs = super().get_import_data_kwargs(**kwargs)
        kwargs.pop("request", None)
        kwargs["rollback_on_validation_errors"] = True
        return kwargs

    def get_import_form_kwargs(self, request):
        return {**super().get_import_form_kwargs(request), "owner": request.user.pk}

    def tmp_storage(self, input_format, **kwargs) -> ImportFileStorage:
        """The kept file of this format, new (`owner`) or previewed before (`name`)."""
        return self.get_tmp_storage_class()(
            encoding=None if input_format.is_binary() else self.from_encoding,
            read_mode=input_format.get_read_mode(),
            **kwargs,
            **self.get_tmp_storage_class_kwargs(),
        )

    def write_to_tmp_storage(self, import_file, input_format):
        """As the library's, the file kept as its uploader's (`ImportFileStorage.owner`)."""
        storage = self.tmp_storage(input_format, owner=import_file.owner)
        storage.save(b"".join(import_file.chunks()))
        return storage

    def export_action(self, request):
        """The export page and its file (`export_of_query`). Its records are the changelist's
        for the same query (the library builds them through the changelist), so a query the
        changelist refuses as no filter of its own (an unknown field, `export_items` sent in
        the URL) is answered as the changelist answers it: back to the page without it
        (`?e=1`), and a 400 should that URL carry it still."""
        try:
            return self.export_of_query(request)
        except IncorrectLookupParameters as refused:
            if ERROR_FLAG in request.GET:
                raise BadRequest("These export parameters are no filter of the list.") from refused
            return HttpResponseRedirect(f"{request.path}?{ERROR_FLAG}=1")

    def export_of_query(self, request):
        """The export page and its file, as the library's. A selection posted with it
        (`export_items`, as the library's export action posts it) is narrowed first to the
        records the staff member may see: the file holds those, and a selection of none
        (another agency's id, an id no record has, a value no id is: alike) exports nothing
        and the list says so, as every action does (`nothing_done`), where the library
        answered the form again with an error it does not show, or an empty file."""
        if request.method == "POST" and "export_items" in request.POST:
            if not self.has_export_permission(request):
                raise PermissionDenied
            selection = request.POST.getlist("export_items")
            visible = visible_keys(self.admin_site, request, self.model, selection)
            if not visible:
                nothing_done(self, request)
                meta = self.model._meta
                changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
                query = request.GET.urlencode()
                return HttpResponseRedirect(f"{changelist}?{query}" if query else changelist)
            post = request.POST.copy()
            post.setlist("export_items", [value for value in selection if value in visible])
            request.POST = post
        return super().export_action(request)

    def get_valid_export_item_pks(self, request):
        # The choices of `export_items`: the library's lists every row of the table, every
        # agency's, on each export of a selection; `export_action` has kept the visible ones.
        return request.POST.getlist("export_items")

    def get_confirm_form_kwargs(self, request, import_form=None):
        kwargs = super().get_confirm_form_kwargs(request, import_form)
        kwargs["formats"] = self.get_import_formats()
        kwargs["resources"] = self.get_import_resource_classes(request)
        return kwargs

    def add_data_read_fail_error_to_form(self, form, e):
        """The preview could not read the file: the cache did not keep it (said as such, not as
        a file "encountered" in the wrong format), or the reader's error, as the library's."""
        if isinstance(e, ImportFileNotKept):
            form.add_error("import_file", NOT_KEPT)
        else:
            super().add_data_read_fail_error_to_form(form, e)

    def import_again(self, request, message: str, level=messages.ERROR):
        """Back to the import page, saying why nothing (more) was imported."""
        self.message_user(request, message, level)
        meta = self.model._meta
        return HttpResponseRedirect(reverse(f"admin:{meta.app_label}_{meta.model_name}_import"))

    @method_decorator(require_POST)
    def process_import(self, request, **kwargs):
        """The confirm step, as the library's, with a claim on the file taken before it is
        read: of several confirms of one preview at once (a double click, two tabs, two nodes)
        one imports the file and the others import nothing and say so. A confirm of a file
        someone else uploaded imports nothing and leaves the file (and its claim) alone. A
        failed import releases the claim and keeps the file, so the staff member may confirm
        again; a successful one removes the file, and the claim outlives it."""
        if not self.has_import_permission(request):
            raise PermissionDenied
        form = self.create_confirm_form(request)
        if not form.is_valid():
            return self.import_again(request, ALTERED)
        input_format = self.get_import_formats()[int(form.cleaned_data["format"])](
            encoding=self.from_encoding
        )
        storage = self.tmp_storage(input_format, name=form.cleaned_data["import_file_name"])
        if not storage.owned_by(request.user.pk):  # another's file: left to its owner
            return self.import_again(request, ALTERED)
        if not storage.claim():
            return self.import_again(request, BEING_IMPORTED, messages.WARNING)
        imported = False
        try:
            data = storage.read()
            try:
                dataset = input_format.create_dataset(data)
            except Exception:  # any reader's error, as the preview's: read in another format
                return self.import_again(request, ALTERED)
            result = self.process_dataset(dataset, form, request, **kwargs)
            imported = not (result.has_errors() or result.has_validation_errors())
        except ImportFileGone:  # the confirm of a file imported already: nothing to do twice
            return self.import_again(request, GONE, messages.WARNING)
        finally:
            if not imported:
                storage.release()
        if imported:
            storage.remove()
        return self.process_result(result, request)

    def process_result(self, result, request):
        if result.has_errors() or result.has_validation_errors():
            return self.import_again(request, REFUSED)
        return super().process_result(result, request)
