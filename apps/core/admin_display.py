"""What the back-office shows: list filters, wording, links and the one-click certificate.

The change-page summaries, which read several domain apps, are in apps.backoffice.summaries.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from django.contrib import admin
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from apps.core.admin import (
    FILTER_BOX,
    KeyCheckedAutocompleteSelect,
    ReadOnlyInline,
    ScopedRelatedFieldListFilter,
)
from apps.core.params import is_ascii_int

# The API's labels (spec section 3) are long and written for integrators; staff read these,
# with the code beside them so a call with an integrator can still name the code.
STAFF_COVERAGE_STATUS = {
    1: "Removed",
    2: "Declined",
    4: "On schedule",
    7: "On schedule",
}


def coverage_status_label(code: int | None) -> str:
    if code is None:
        return "—"
    return f"{STAFF_COVERAGE_STATUS.get(code, 'Unknown')} ({code})"


class YesNoFilter(admin.SimpleListFilter):
    """A "yes / no" list filter on a condition (`condition()`: an expression such as an
    `Exists`, applied as it is or negated), never an annotation of the whole list; subclasses
    set `title`, `parameter_name`, the two `labels` and `condition`."""

    labels: tuple[str, str] = ("Yes", "No")

    def lookups(self, request, model_admin):
        return [("yes", self.labels[0]), ("no", self.labels[1])]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return self.filter(queryset, self.value() == "yes")
        return queryset

    def filter(self, queryset, yes: bool):
        condition = self.condition()
        return queryset.filter(condition if yes else ~condition)


class CoveragePeriodInline(ReadOnlyInline):
    """Scheduling periods (of a unit, a driver or a policy), read-only, in staff wording.
    Subclasses name the model, the other side in `fields` and what to `select_related`."""

    fields = ["policy", "status", "policy_added_date", "policy_removed_date"]
    select_related: tuple[str, ...] = ()

    def get_readonly_fields(self, request, obj=None):
        return self.fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related(*self.select_related)

    @admin.display(description="coverage status")
    def status(self, obj) -> str:
        return coverage_status_label(obj.coverage_status)


class CoverageStatusFilter(admin.SimpleListFilter):
    """Coverage statuses in staff wording, with the code beside."""

    title = "coverage status"
    parameter_name = "coverage_status"
    codes: tuple[int, ...] = (4, 1, 2)

    def lookups(self, request, model_admin):
        return [(str(code), coverage_status_label(code)) for code in self.codes]

    def queryset(self, request, queryset):
        if is_ascii_int(self.value()):
            return queryset.filter(coverage_status=int(self.value()))
        return queryset


class DriverCoverageStatusFilter(CoverageStatusFilter):
    codes = (7, 1, 2)


def when(value: dt.datetime | None) -> str:
    """A timestamp in the site's time zone, with the zone named (staff work across zones)."""
    if value is None:
        return "—"
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M %Z")


def human_size(size: int | None) -> str:
    return "—" if size is None else filesizeformat(size)


def field_column(path: str, description: str, shown: Callable | None = None, boolean=False):
    """A list or inline column showing the record's field at `path` (`client__client_name`, or
    an annotation), sorted by it, through `shown` (`when`, `human_size`) when given; a
    `boolean` one as Django's yes/no icon."""
    attributes = path.split("__")

    @admin.display(description=description, ordering=path, boolean=boolean)
    def column(self, obj):
        value = obj
        for attribute in attributes:
            value = getattr(value, attribute)
        return shown(value) if shown is not None else value

    return column


def admin_url(obj, action: str = "change") -> str:
    meta = obj._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{action}", args=[obj.pk])


class DeletedFilter(admin.SimpleListFilter):
    """Live records by default; deleted ones (or all) on request.

    A soft-deleted record is history, not work: the list opens on what is live.
    """

    title = "record"
    parameter_name = "record"

    def lookups(self, request, model_admin):
        return [("deleted", "Deleted only"), ("all", "Live and deleted")]

    def choices(self, changelist):
        yield {
            "selected": self.value() is None,
            "query_string": changelist.get_query_string(remove=[self.parameter_name]),
            "display": "Live",
        }
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == lookup,
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }

    def queryset(self, request, queryset):
        if self.value() == "all" or (self.value() is None and "deleted__exact" in request.GET):
            return queryset  # an explicit ?deleted__exact= (older links) decides alone
        if self.value() == "deleted":
            return queryset.not_live()
        return queryset.live()


class PermittedColumnsMixin:
    """Columns, list filters and inline fields that show another record's data (a client's
    policies, whether a unit is covered today) only to staff holding the permissions the API
    asks for that data: `needs` maps a column or field name, or a list filter's class, to
    them. A filter left out refuses its URL typed by hand as any unknown parameter (`?e=1`)."""

    needs: dict = {}

    def _permitted(self, request, names):
        user = request.user
        return [n for n in names if user.has_perms(self.needs.get(_filter_key(n), ()))]

    def get_list_display(self, request):
        return self._permitted(request, super().get_list_display(request))

    def get_list_filter(self, request):
        return self._permitted(request, super().get_list_filter(request))

    def get_fields(self, request, obj=None):
        return self._permitted(request, super().get_fields(request, obj))

    def get_readonly_fields(self, request, obj=None):
        return self._permitted(request, super().get_readonly_fields(request, obj))


def _filter_key(entry):
    # A list filter is a class, a field name, or (field name, filter class).
    return entry[0] if isinstance(entry, tuple) else entry


class DeletedColumnMixin:
    """The "deleted" column appears only when deleted records are listed, as a word, never
    as a red cross on every healthy row."""

    def get_list_display(self, request):
        columns = [c for c in super().get_list_display(request) if c != "deleted"]
        if request.GET.get(DeletedFilter.parameter_name) in ("deleted", "all"):
            columns.append("deleted_marker")
        return columns

    @admin.display(description="record", ordering="deleted")
    def deleted_marker(self, obj) -> str:
        if obj.deleted:
            return format_html('<strong class="bo-deleted">{}</strong>', "Deleted")
        return "Live"


class DropdownFilter(ScopedRelatedFieldListFilter):
    """A relation filter shown as one dropdown (56 states, dozens of makes or agencies)."""

    template = "admin/bo_dropdown_filter.html"


class AutocompleteFilter(ScopedRelatedFieldListFilter):
    """A relation filter with too many records to list (an agency's clients: 20,000 on the
    bench), shown as a search box: the admin's autocomplete view finds the records as staff
    type, through the related admin's scoped queryset and search fields, and choosing one opens
    its filtered list.

    Listing every client in the sidebar cost the big agency's vehicle list 0.55 of its 0.7 s
    and a page of several megabytes (issue 18: a request's cost must not grow with the size
    of the agency). Here only the chosen record is read, scoped like every other filter: a
    client of another agency named in the URL shows no name and filters the list to nothing.
    """

    template = "admin/bo_autocomplete_filter.html"

    def field_choices(self, field, request, model_admin):
        from django.forms import ModelChoiceField

        if not isinstance(model_admin, AutocompleteFilterMedia):
            raise ImproperlyConfigured(
                f"{type(model_admin).__name__} lists an AutocompleteFilter: it needs "
                "AutocompleteFilterMedia for the box's scripts."
            )
        target = getattr(field.remote_field, "field_name", None) or "pk"
        chosen = [value for value in self.lookup_val or () if is_ascii_int(value)]
        choice = ModelChoiceField(
            queryset=self.related_records(field, request),
            to_field_name=target,
            required=False,
            # The chosen value is read only if it could be a key: an id past the column's
            # range was an OverflowError (500), where an unknown id lists nothing.
            widget=KeyCheckedAutocompleteSelect(field, model_admin.admin_site, asks=FILTER_BOX),
        )
        self.widget_html = choice.widget.render(
            self.lookup_kwarg,
            chosen[-1] if chosen else None,
            attrs={
                "class": "bo-autocomplete-filter",
                "aria-label": field.verbose_name,
                "id": f"bo-filter-{self.field_path}",
            },
        )
        return []  # nothing listed: the box finds the records

    def has_output(self):
        return True  # the box, to find a record, even with nothing chosen


class AutocompleteFilterMedia:
    """An admin with an `AutocompleteFilter`: its pages load the admin's autocomplete scripts
    (select2 on the admin's own jQuery) in the page's head, in the order Django's autocomplete
    widget needs them."""

    @property
    def media(self):
        from django.contrib.admin.widgets import AutocompleteSelect

        return super().media + AutocompleteSelect(None, self.admin_site).media


class OneClickCertificateMixin:
    """A "Download certificate" button on the change page: the list's certificate action,
    run on this one record (same builder, same scoping, same PDF), under the same permissions:
    the action's `required_permissions`, the certificate endpoint's."""

    certificate_action = None  # staticmethod(download_<model>_certificates)

    def has_certificate_permission(self, request, obj=None) -> bool:
        """Whether the staff member may download certificates (the action is offered, the
        button's view answers): the certificate endpoint's permissions, on top of seeing the
        record."""
        return request.user.has_perms(self.certificate_action.required_permissions)

    def get_urls(self):
        from django.urls import path

        meta = self.model._meta
        return [
            path(
                "<int:pk>/certificate/",
                self.admin_site.admin_view(self.certificate_view),
                name=f"{meta.app_label}_{meta.model_name}_certificate",
            ),
            *super().get_urls(),
        ]

    def certificate_view(self, request, pk: int):
        from django.http import Http404
        from django.shortcuts import redirect

        queryset = self.get_queryset(request).filter(pk=pk)
        obj = queryset.first()
        if obj is None or not self.has_view_permission(request, obj):
            raise Http404("No such record.")
        if not self.has_certificate_permission(request, obj):
            raise PermissionDenied("You may not download this kind of certificate.")
        response = self.certificate_action(self, request, queryset)
        if response is None:  # no certificate today; the action said why in a message
            return redirect(admin_url(obj))
        return response
