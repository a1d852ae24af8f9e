"""Admin machinery: staff who are not superusers see only their agencies' data."""

from __future__ import annotations

import dataclasses
import functools
from urllib.parse import urlencode

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.options import TO_FIELD_VAR
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ChangeList
from django.contrib.admin.widgets import AutocompleteSelect
from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist, PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import IntegrityError, router, transaction
from django.db.models import DateField, DateTimeField, DecimalField, Field, Model, QuerySet
from django.forms.models import BaseInlineFormSet, _get_foreign_key
from django.http import Http404, HttpResponseRedirect
from django.urls import reverse
from django.utils.functional import cached_property
from django.utils.text import capfirst
from rest_framework.exceptions import APIException
from rest_framework.exceptions import ValidationError as DRFValidationError
from simple_history.admin import SimpleHistoryAdmin
from simple_history.models import DeletedObject
from simple_history.template_utils import HistoricalRecordContextHelper
from simple_history.utils import get_history_manager_for_model

from apps.core import counting
from apps.core.admin_keys import record_key
from apps.core.admin_people import WhoColumnsMixin, who_label
from apps.core.admin_versions import (
    VERSION_FIELD,
    VersionField,
    record_digest,
    shows_initial_values,
    stale_row_refusal,
    stale_version_refusal,
    version_token,
)
from apps.core.date_forms import DateFormField
from apps.core.history import versions_for_user, versions_marked, versions_with_previous
from apps.core.models import AgencyScopedQuerySet, IdempotencyRecord, of_a_client, referable
from apps.core.money_forms import MoneyFormField
from apps.core.pagination import ids_per_agency, rows_in_order
from apps.core.params import id_or_none, is_ascii_int
from apps.core.people import NOT_VISIBLE, people_for
from apps.core.problems import race_message
from apps.core.services import rows_lock

# What a delete service raises to refuse (409 or 400 in the API); PermissionDenied stays a 403.
DELETE_REFUSALS = (ValidationError, APIException)


def _scoped(queryset, user):
    if isinstance(queryset, AgencyScopedQuerySet):
        return queryset.for_user(user)
    return queryset


class ScopedRelatedFieldListFilter(admin.RelatedFieldListFilter):
    """A "By <relation>" list filter that offers only what the staff member may see.

    Django's own filter lists every row of the related table (every agency, every client);
    registered first below, this one serves every relation filter of every admin.
    """

    def related_records(self, field, request):
        """The related model's records the staff member may see."""
        return _scoped(field.related_model._default_manager.all(), request.user)

    def field_choices(self, field, request, model_admin):
        queryset = self.related_records(field, request)
        ordering = self.field_admin_ordering(field, request, model_admin)
        if ordering:
            queryset = queryset.order_by(*ordering)
        target = getattr(field.remote_field, "field_name", None) or "pk"
        return [(getattr(obj, target), str(obj)) for obj in queryset]

    def has_output(self):
        # Django takes a filter's value out of the URL and applies the filter only if it has
        # output: with one agency to choose, ?agency__id__exact=2 (not theirs, or none) was
        # dropped and the list showed every record of theirs. A value given is applied (a
        # record they cannot see names nothing: the list is empty, as the API's is) and shown.
        given = self.lookup_val is not None or self.lookup_val_isnull is not None
        return given or super().has_output()

    def choices(self, changelist):
        yield from super().choices(changelist)
        chosen = self.lookup_val or []
        if chosen and not {str(value) for value, _ in self.lookup_choices} & {*chosen}:
            yield {
                "selected": True,
                "query_string": changelist.get_query_string(),
                "display": "None of yours",
            }

    def queryset(self, request, queryset):
        # An id of more digits than any key holds is no record, as an unknown id is: the list
        # is empty (Python would not even read 5,000 digits as an int; one past 2^63-1 within
        # 19 digits, Django's lookup already answers with no rows).
        if any(is_ascii_int(v) and len(v.lstrip("0")) > 19 for v in self.lookup_val or ()):
            return queryset.none()
        return super().queryset(request, queryset)


admin.FieldListFilter.register(
    lambda f: f.remote_field is not None, ScopedRelatedFieldListFilter, take_priority=True
)


class KeyCheckedAutocompleteSelect(AutocompleteSelect):
    """Django's autocomplete box, which shows again what was chosen only when it could be a key.

    Re-rendering an invalid form, Django's widget reads the chosen record with the submitted
    value as it came (`pk__in=["abc"]`): a value no select box sends ("abc", "1.5", an id past
    the column's range) was a server error instead of the field's own "Select a valid choice".
    Such a value is no record, so the box shows nothing chosen and the field says why.

    `asks`: what the box adds to the URL it asks (`autocomplete_box`).
    """

    def __init__(self, field, admin_site, *args, asks: dict | None = None, **kwargs):
        super().__init__(field, admin_site, *args, **kwargs)
        self.asks = asks or {}

    def get_url(self):
        url = super().get_url()
        return f"{url}?{urlencode(self.asks)}" if self.asks else url

    def optgroups(self, name, value, attr=None):
        remote = self.field.remote_field
        meta = remote.model._meta
        target = meta.get_field(getattr(remote, "field_name", None) or meta.pk.name)
        keys = [v for v in value if record_key(target, v, using=self.db) is not None]
        return super().optgroups(name, keys, attr)


class _ScopedRows(WhoColumnsMixin):
    """The rows and the relation choices of an admin page or inline, through `for_user`; its
    who fields as the staff member may see them (`WhoColumnsMixin`).

    `takes_deleted`: the relations whose save accepts a soft-deleted record (a premium report's
    policy); their boxes say so (`TAKES_DELETED`) and offer deleted records too. Every other
    form box offers what a write may name (`referable`).
    """

    takes_deleted: tuple[str, ...] = ()

    def get_queryset(self, request):
        return _scoped(super().get_queryset(request), request.user)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if isinstance(db_field, DecimalField):
            # Every amount of every form and inline is money, judged as the API judges it.
            kwargs.setdefault("form_class", MoneyFormField)
        elif isinstance(db_field, DateField) and not isinstance(db_field, DateTimeField):
            # Every date of every form and inline is read as the API reads one.
            kwargs.setdefault("form_class", DateFormField)
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if "widget" not in kwargs and db_field.name in self.get_autocomplete_fields(request):
            kwargs["widget"] = KeyCheckedAutocompleteSelect(
                db_field,
                self.admin_site,
                using=kwargs.get("using"),
                asks={
                    **_editing(request, db_field),
                    **(TAKES_DELETED if db_field.name in self.takes_deleted else {}),
                },
            )
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and hasattr(field, "queryset"):
            field.queryset = _scoped(field.queryset, request.user)
        return field


# Django's autocomplete request names the field whose box asks (`app_label`, `model_name`,
# `field_name`); a box adds to the URL it asks what else its answer depends on. A list filter's
# box (`AutocompleteFilter`) sends its list's field, the very field of the form's box of that
# relation, but looks for any record the list may hold (a deleted client's policies): it says
# so (`FILTER_BOX`). A form's box offers what its save accepts: a live record of a live client
# (`referable`), unless its save accepts a deleted one too (a premium report's policy), which
# it says (`TAKES_DELETED`). A form's box of a relation to its own model (a client's parent)
# names the record on its page (`EDITING`), which it does not offer. A form's box whose save
# needs a record of one client (a driver link's unit: a unit of the driver's client) names that
# client (`SAME_CLIENT`) and offers its records only. A mark only changes what a box offers,
# never what a save accepts.
FILTER_BOX = {"box": "list-filter"}
TAKES_DELETED = {"box": "takes-deleted"}
EDITING = "editing"
SAME_CLIENT = "client"


@dataclasses.dataclass(frozen=True)
class AutocompleteBox:
    """The box that asks the admin's autocomplete view (`autocomplete_box`)."""

    field: Field  # the relation whose box asks
    list_filter: bool  # a list filter's box, not a form's
    editing: int | None = None  # the record on the form's page, for a relation to its model
    takes_deleted: bool = False  # a form's box whose save accepts a soft-deleted record
    client: int | None = None  # the one client whose records the form's save accepts

    @property
    def form_box(self) -> bool:
        """A form's box: it offers what the form's save accepts."""
        return not self.list_filter

    @property
    def live_only(self) -> bool:
        """It offers only what a write may name (`referable`): a form's box whose save needs a
        live record of a live client (a list filter's finds deleted records' rows)."""
        return self.form_box and not self.takes_deleted

    @property
    def self_relation(self) -> bool:
        """A relation to its own model (a client's parent)."""
        return self.field.related_model is self.field.model


def autocomplete_box(request) -> AutocompleteBox | None:
    """The box whose request `request` is, when it is the admin's autocomplete view; None for
    any other request. For the related admin's `get_search_results` to offer a form's box only
    what its save accepts (`AgencyScopedAdmin.get_search_results`, `ClientAdmin`'s)."""
    match = getattr(request, "resolver_match", None)
    if match is None or match.url_name != "autocomplete":
        return None
    try:
        model = apps.get_model(request.GET["app_label"], request.GET["model_name"])
        field = model._meta.get_field(request.GET["field_name"])
    except (KeyError, LookupError, FieldDoesNotExist):
        return None
    return AutocompleteBox(
        field=field,
        list_filter=_marked(request, FILTER_BOX),
        editing=_marked_id(request, EDITING),
        takes_deleted=_marked(request, TAKES_DELETED),
        client=_marked_id(request, SAME_CLIENT),
    )


def _marked(request, mark: dict) -> bool:
    return all(request.GET.get(k) == v for k, v in mark.items())


def _marked_id(request, name: str) -> int | None:
    return id_or_none(request.GET.get(name, ""))


def _editing(request, field) -> dict:
    """What a form's box of `field` adds to its URL: on the change page of a record of the
    model the relation points to (a client's page, for its parent box), that record."""
    match = getattr(request, "resolver_match", None)
    meta = field.model._meta
    if match is None or field.related_model is not field.model:
        return {}
    if match.url_name != f"{meta.app_label}_{meta.model_name}_change":
        return {}
    object_id = str(match.kwargs.get("object_id", ""))
    return {EDITING: object_id} if is_ascii_int(object_id) else {}


class ReadOnlyAdminMixin:
    """Shown, never written from the admin: no add, change or delete (the record has another
    writer, or none)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class CountedPaginator(Paginator):
    """A changelist's pages counted as the API's lists count theirs (`apps.core.counting`): the
    count is kept under the data version that every write moves, so an agency's 300,000 units
    are not counted again on every page view (issue 18).

    A page of a staff member of several agencies is read as the API reads one: each agency's
    first ids in the list's order through its own index, then the page of their union
    (`apps.core.pagination.ids_per_agency`). `agency IN (a, b)` has no index that gives the
    order of both, so PostgreSQL sorted every driver or policy of both agencies for each page
    (56 ms of the drivers' 96 ms page for the bench's two agencies). A list whose rows are
    edited in place (`list_editable`) keeps Django's page, a queryset its formset needs."""

    rows_per_agency = True

    @cached_property
    def count(self) -> int:
        return counting.count(self.object_list)

    def page(self, number):
        page = super().page(number)
        sliced = page.object_list
        if not self.rows_per_agency or not isinstance(sliced, QuerySet):
            return page
        offset, end = sliced.query.low_mark, sliced.query.high_mark
        ids = ids_per_agency(self.object_list, offset, end - offset) if end else None
        if ids is not None:
            page.object_list = rows_in_order(self.object_list, ids)
        return page


class _CountedChangeList(ChangeList):
    def get_results(self, request):
        # Django counts the list without its filters too, for "N results (M total)", by
        # `root_queryset.count()` on every view: counted here as the page count is (9 ms for
        # an agency's 302,100 units). Only that call is swapped, on a clone of the root, for
        # the time of this method (the list's own queryset was built from the root before).
        root = self.root_queryset
        counted = root._chain()
        counted.count = functools.partial(counting.count, root)
        self.root_queryset = counted
        try:
            super().get_results(request)
        finally:
            self.root_queryset = root


class _PageRowsChangeList(_CountedChangeList):
    def get_results(self, request):
        super().get_results(request)
        self.result_list = self.model_admin.page_columns(list(self.result_list))


class PageRowsMixin:
    """A changelist whose columns show something read about each row of the page (a unit's
    coverage today, a client's policies): read by `page_columns` for the page's rows, once the
    page is cut. Annotated on the list instead, PostgreSQL computed it for every row of the
    agency before the page's first one (issue 18)."""

    def get_changelist(self, request, **kwargs):
        return _PageRowsChangeList

    def page_columns(self, rows: list) -> list:
        """The page's rows, with what the columns read about them."""
        return rows


class AgencyScopedAdmin(_ScopedRows, admin.ModelAdmin):
    """Lists, detail pages, autocompletes and choices all go through `for_user`."""

    list_per_page = 100
    paginator = CountedPaginator

    def get_changelist(self, request, **kwargs):
        return _CountedChangeList

    def get_paginator(self, request, queryset, per_page, orphans=0, allow_empty_first_page=True):
        paginator = super().get_paginator(
            request, queryset, per_page, orphans, allow_empty_first_page
        )
        if isinstance(paginator, CountedPaginator) and self.list_editable:
            paginator.rows_per_agency = False
        return paginator

    def get_search_results(self, request, queryset, search_term):
        queryset, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        box = autocomplete_box(request)
        if box is None or not box.form_box:
            return queryset, may_have_duplicates
        if box.live_only:
            # A form's box offers what its save accepts: every write names a live record of a
            # live client (`visible_client`, `live_reference`): a policy's, unit's or driver's
            # client, a client's parent, a scheduling's policy and unit or driver, a driver
            # link's unit. A deleted one was offered, then refused on save.
            queryset = referable(queryset)
        if box.self_relation and box.editing is not None:
            # A record is never related to itself (a client its own parent): not offered.
            queryset = queryset.exclude(pk=box.editing)
        if box.client is not None and of_a_client(queryset.model):
            # The save takes a record of that client only (a driver link's unit is one of the
            # driver's client's): another client's was offered, then refused on save.
            queryset = queryset.filter(client_id=box.client)
        return queryset, may_have_duplicates

    def save_model(self, request, obj, form, change):
        if hasattr(obj, "updated_by_id"):
            obj.updated_by = request.user
            if not change:
                obj.created_by = request.user
        super().save_model(request, obj, form, change)

    def run_service(self, request, queryset, service, verb: str) -> None:
        """Apply a service to each selected object; report what worked and what did not."""
        run_on_each(self, request, queryset, service, verb)

    def response_action(self, request, queryset):
        """Every action (Django's "Delete selected" included) runs on a selection that names
        a record the staff member may see, or not at all: then the list says so, once, in the
        words every action uses (`nothing_done`), instead of each action's own answer to an
        empty queryset (a form of no units, no message, an empty confirmation page)."""
        selected = request.POST.getlist(ACTION_CHECKBOX_NAME)
        across = forms.BooleanField(required=False).clean(request.POST.get("select_across"))
        if not (selected or across):
            return super().response_action(request, queryset)  # Django's "Items must be ..."
        keys = selected_keys(self.model, selected)
        if not (queryset if across else queryset.filter(pk__in=keys)).exists():
            nothing_done(self, request)
            return None
        if not across:
            # Django filters by the values as sent: "abc" among them was a server error.
            post = request.POST.copy()
            post.setlist(ACTION_CHECKBOX_NAME, [str(key) for key in keys])
            request.POST = post
        return super().response_action(request, queryset)


def selected_keys(model, values) -> list:
    """The values of a selection (`_selected_action`, `export_items`) that could be keys of
    `model`; the others name no record."""
    pk = model._meta.pk
    using = router.db_for_read(model)
    keys = (record_key(pk, value, using=using) for value in values)
    return [key for key in keys if key is not None]


# A bulk action whose selection names no record the staff member may see: ids of another
# agency's records posted by hand, or records deleted since the list was shown.
NOTHING_DONE = "Nothing was done: none of the selected records is one you can see."


def nothing_done(model_admin, request) -> None:
    """What every action (and the export of a selection) says when its selection names no
    record the staff member may see."""
    model_admin.message_user(request, NOTHING_DONE, messages.WARNING)


def run_on_each(model_admin, request, queryset, service, verb: str) -> None:
    """A bulk action: `service` applied to each selected record, and what came of it said
    once for every action: "<verb> N record(s).", each refusal, or that nothing was done
    (never "Froze 0 report(s).")."""
    done, failed = 0, []
    for obj in queryset:
        try:
            service(obj)
            done += 1
        except (ValidationError, PermissionDenied, APIException) as exc:
            failed.append(f"{obj}: {refusal_message(exc)}")
    if done:
        model_admin.message_user(request, f"{verb} {done} record(s).", messages.SUCCESS)
    elif not failed:
        nothing_done(model_admin, request)
    for failure in failed:
        model_admin.message_user(request, failure, messages.ERROR)


def refusal_message(exc: Exception) -> str:
    """A service's refusal as staff read it: the API's detail, or the validation messages."""
    detail = getattr(exc, "detail", None) or "; ".join(getattr(exc, "messages", [])) or exc
    return str(detail)


def in_staff_words(exc: ValidationError, code: str, **params) -> ValidationError:
    """A service's refusal with its errors of `code` told as staff act: their `params`
    replaced (how to do what the message asks, through the admin's pages where the service
    names the API's way); the rule and the rest of the message stay the service's."""

    def reworded(error: ValidationError) -> ValidationError:
        if error.code != code:
            return error
        return ValidationError(error.message, code=code, params={**(error.params or {}), **params})

    if hasattr(exc, "error_dict"):
        return ValidationError(
            {key: [reworded(e) for e in errors] for key, errors in exc.error_dict.items()}
        )
    return ValidationError([reworded(e) for e in exc.error_list])


def _deletes_all_or_nothing(delete_selected):
    """Django's "Delete selected" action run in one transaction, as its delete page is: a record
    the service refuses (in use since the confirmation page was shown) leaves every selected
    record in place and is said in a message, where Django's action would have answered 500
    after deleting the records before it."""

    @functools.wraps(delete_selected)
    def action(modeladmin, request, queryset):
        try:
            with transaction.atomic(using=router.db_for_write(modeladmin.model)):
                return delete_selected(modeladmin, request, queryset)
        except DELETE_REFUSALS as exc:
            modeladmin.message_user(
                request, f"Nothing was deleted. {refusal_message(exc)}", messages.ERROR
            )
            return None

    return action


class _DryRun(Exception):
    """Raised inside a savepoint to undo a service call made only to validate."""


def trial_refusal(service_call) -> Exception | None:
    """Run `service_call` inside a savepoint that is rolled back, to validate a form through
    the service: what the service refuses (a validation error, a 403, an API error), or None.

    A rule that only the database enforced at the trial's save (an IntegrityError: a race, or a
    rule `full_clean` did not see) is a refusal too, in the API's words for it (its 409), never
    a server error: the savepoint is gone and the page shows the form again."""
    try:
        with transaction.atomic():
            service_call()
            raise _DryRun
    except _DryRun:
        return None
    except (ValidationError, PermissionDenied, APIException) as exc:
        return exc
    except IntegrityError as exc:
        return ValidationError(race_message(exc))


def service_errors(form, exc: Exception) -> None:
    """Put a service's refusal on the form: on the field it names where the form has one
    (`parent_client_id` is the form's `parent_client`), else above the form. A refusal is
    Django's (`error_dict`) or the API's (a DRF ValidationError whose detail names fields:
    the document storage's "The file is empty."), never shown as its Python repr."""
    if isinstance(exc, ValidationError) and hasattr(exc, "error_dict"):
        named = {
            key: [message for error in errors for message in error.messages]
            for key, errors in exc.error_dict.items()
        }
    elif isinstance(exc, DRFValidationError) and isinstance(exc.detail, dict):
        named = {
            key: [str(m) for m in (errors if isinstance(errors, list) else [errors])]
            for key, errors in exc.detail.items()
        }
    else:
        form.add_error(None, refusal_message(exc))
        return
    for key, messages_ in named.items():
        field = next((f for f in (key, key.removesuffix("_id")) if f in form.fields), None)
        if field is not None and form.fields[field].widget.is_hidden:
            field = None  # an inline's parent key: its errors would not be displayed
        form.add_error(field, messages_)


class ServiceFormAdmin(AgencyScopedAdmin):
    """A change form that validates and saves through the app's services, never around them.

    The form first validates as Django does, then runs the service inside a savepoint that is
    rolled back, so every business rule (and its message) is the service's, shown on the form;
    `save_model` then runs the same service for real. Subclasses map the form to the service
    in `service_save(request, instance, cleaned_data, change) -> saved instance`.

    A change form saves only over the record it was opened on (`apps.core.admin_versions`): the
    page carries the version of the record and of its collections (`ServiceCollectionInline`),
    and a POST locks the record (`lock_for_change`), then refuses, on the form, a version that
    is no longer the stored one; a list edited in place compares each row's fields to the
    values it showed.
    """

    # The path from the record to the client whose row every write of it locks first (a
    # client, its policies, their units, their periods: `client_lock_first`); by default its
    # own `client`, when it has one. A change form's POST takes the locks in that order.
    client_path: str | None = None

    # Declared by each admin: the service's plain fields, the relations it takes as `<name>_id`,
    # and the services themselves, `create(*, user, **fields)` and `update(*, user, instance,
    # **changes)`, which take them as keyword arguments.
    service_fields: tuple[str, ...] = ()
    service_relations: tuple[str, ...] = ()
    create_service = None
    update_service = None
    # `delete(*, user, instance)`; without one (and no delete_model of the admin's own) a
    # record cannot be hard-deleted from the admin: no ORM delete around the services.
    delete_service = None

    def _deletes_through_a_service(self) -> bool:
        own_delete = type(self).delete_model is not ServiceFormAdmin.delete_model
        return type(self).delete_service is not None or own_delete

    def has_delete_permission(self, request, obj=None):
        return self._deletes_through_a_service() and super().has_delete_permission(request, obj)

    def delete_model(self, request, obj):
        type(self).delete_service(user=request.user, instance=obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            try:
                self.delete_model(request, obj)
            except DELETE_REFUSALS as exc:
                raise ValidationError(f"{obj}: {refusal_message(exc)}") from exc

    def delete_view(self, request, object_id, extra_context=None):
        # Django's delete page rolls back a failed delete but answers 500: a record the
        # service refuses (in use since the page was shown) goes back to its page, with why.
        try:
            return super().delete_view(request, object_id, extra_context)
        except DELETE_REFUSALS as exc:
            self.message_user(request, refusal_message(exc), messages.ERROR)
            opts = self.opts
            return HttpResponseRedirect(
                reverse(
                    f"admin:{opts.app_label}_{opts.model_name}_change",
                    args=[object_id],
                    current_app=self.admin_site.name,
                )
            )

    def get_actions(self, request):
        actions = super().get_actions(request)
        if "delete_selected" in actions:
            delete_selected, name, description = actions["delete_selected"]
            actions[name] = (_deletes_all_or_nothing(delete_selected), name, description)
        return actions

    def service_save(self, request, instance, cleaned_data: dict, change: bool, **replaced):
        """Map the form to the service's keyword arguments and call create or update;
        `replaced`: the collections its inlines replace (`ServiceCollectionInline`)."""
        data = {name: cleaned_data[name] for name in self.service_fields if name in cleaned_data}
        for relation in self.service_relations:
            if relation in cleaned_data:
                value = cleaned_data[relation]
                data[f"{relation}_id"] = value.pk if value is not None else None
        if change:
            return type(self).update_service(
                user=request.user, instance=instance, **data, **replaced
            )
        return type(self).create_service(user=request.user, **data)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change=change, **kwargs)
        model_admin = self

        class ServiceForm(form_class):
            if obj is not None:
                record_version = VersionField()

            def clean(self):
                cleaned_data = super().clean()
                if obj is not None:
                    refusal = model_admin.stale_refusal(
                        request, self.instance, self.cleaned_data.get(VERSION_FIELD)
                    )
                    if refusal is not None:
                        self.add_error(None, refusal)
                return cleaned_data

            def _post_clean(self):
                super()._post_clean()
                if self.errors:
                    return
                refusal = trial_refusal(
                    lambda: model_admin.service_save(
                        request, self.instance, self.cleaned_data, change=obj is not None
                    )
                )
                if refusal is not None:
                    service_errors(self, refusal)

        return ServiceForm

    def get_fields(self, request, obj=None):
        # The version is no field of the record: carried by the page, never in a fieldset.
        return [name for name in super().get_fields(request, obj) if name != VERSION_FIELD]

    def _changeform_view(self, request, object_id, form_url, extra_context):
        # Django's change view, inside its transaction: a save locks the record before it is
        # read for the form, so what the form is checked against (`stale_refusal`) is what the
        # service then changes; a save committed meanwhile waits, or comes first and is seen.
        saves = request.method == "POST" and "_saveasnew" not in request.POST
        to_field = request.POST.get(TO_FIELD_VAR, request.GET.get(TO_FIELD_VAR))
        by_key = to_field in (None, "", self.model._meta.pk.name, self.model._meta.pk.attname)
        if saves and by_key and object_id is not None and self.has_change_permission(request):
            self.lock_for_change(request, unquote(object_id))
        return super()._changeform_view(request, object_id, form_url, extra_context)

    def lock_for_change(self, request, object_id: str) -> None:
        """Lock the record `object_id` for its change form's save, in the order every write
        takes: its client first (`client_path`), then the record. Nothing on SQLite, which runs
        one writer at a time."""
        key = record_key(self.model._meta.pk, object_id, using=router.db_for_write(self.model))
        if key is None:
            return  # no record: Django's view says so
        path = self.client_path or ("client" if of_a_client(self.model) else None)
        records = _scoped(self.model._default_manager.filter(pk=key), request.user)
        if path is not None:
            client_model = self.model
            for name in path.split("__"):
                client_model = client_model._meta.get_field(name).related_model
            owner = self.model._base_manager.filter(pk=key).values(path)
            rows_lock(client_model._base_manager.filter(pk__in=owner))
        rows_lock(records)

    def stored_collections(self, request, obj) -> dict[str, list]:
        """The rows of `obj`'s collections (`ServiceCollectionInline`) as stored, by name."""
        collections = {}
        for inline in self.get_inline_instances(request, obj):
            if isinstance(inline, ServiceCollectionInline):
                fk = _get_foreign_key(self.model, inline.model, fk_name=inline.fk_name)
                rows = inline.get_queryset(request).filter(**{fk.name: obj})
                collections[_collection_name(inline, fk)] = list(rows)
        return collections

    def stale_refusal(self, request, obj, token: str | None) -> str | None:
        """Why the change form opened on version `token` may not save over `obj` as stored."""
        stored = record_digest(obj, self.stored_collections(request, obj))
        return stale_version_refusal(request, obj, token, stored)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        form = context["adminform"].form
        if VERSION_FIELD in form.fields:
            if not form.is_bound:
                # The version of what the page shows: the record and the collections' rows
                # its inlines were built with (read once, so the page and its version agree).
                shown = {
                    _collection_name(inline.opts, inline.formset.fk): [
                        row.instance for row in inline.formset.initial_forms
                    ]
                    for inline in context.get("inline_admin_formsets", ())
                    if isinstance(inline.opts, ServiceCollectionInline)
                }
                form.initial[VERSION_FIELD] = version_token(obj, shown)
            context["record_version"] = form[VERSION_FIELD]  # templates/admin/change_form.html
        return super().render_change_form(request, context, add, change, form_url, obj)

    def get_changelist_form(self, request, **kwargs):
        form_class = super().get_changelist_form(request, **kwargs)
        editable = tuple(self.list_editable)

        class ListRowForm(form_class):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                shows_initial_values(self, editable)

            def clean(self):
                cleaned_data = super().clean()
                refusal = stale_row_refusal(request, self, editable)
                if refusal is not None:
                    self.add_error(*refusal)
                return cleaned_data

        return ListRowForm

    @staticmethod
    def _saved(obj, form, saved) -> None:
        # The admin goes on with `obj` (change message, redirect): make it what was saved.
        for field in obj._meta.concrete_fields:
            setattr(obj, field.attname, getattr(saved, field.attname))
        obj._state.adding = False
        form.instance = saved

    def save_model(self, request, obj, form, change):
        if change:
            return  # in save_related, with the collections its inlines replace
        self._saved(obj, form, self.service_save(request, obj, form.cleaned_data, change=False))

    def save_related(self, request, form, formsets, change):
        if change:
            # The record and its collections (a policy's limits and rates) in one service
            # call, as one PUT makes them: one change, one event, carrying the new record.
            replaced: dict = {}
            for formset in formsets:
                collection = getattr(formset, "service_collection", None)
                if collection is not None and formset.has_changed():
                    replaced.update(collection.service_changes(collection.kept_rows(formset)))
            obj = form.instance
            saved = self.service_save(request, obj, form.cleaned_data, change=True, **replaced)
            self._saved(obj, form, saved)
        super().save_related(request, form, formsets, change)

    def save_formset(self, request, form, formset, change):
        if getattr(formset, "service_collection", None) is not None:
            # Replaced by the record's own service call (save_related).
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
            return []
        inline = getattr(formset, "service_inline", None)
        if inline is None:
            return super().save_formset(request, form, formset, change)
        # What ModelFormSet.save() would record, for the admin's change message.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for row in formset.forms:
            if row.instance.pk is None and row.has_changed():
                created = inline.service_create(request, form.instance, row.cleaned_data)
                formset.new_objects.append(created)
        return formset.new_objects


def _collection_name(inline, fk) -> str:
    """A collection's name in a record's version: its rows' model and their key to the record."""
    return f"{inline.model._meta.label}.{fk.name}"


class SoftDeleteAdmin(AgencyScopedAdmin):
    """Soft deletion and restoration through the record's update service; no hard delete."""

    update_service = None  # the app's `<entity>_update(*, user, instance, **changes)`

    def get_actions(self, request):
        actions = super().get_actions(request)
        # The API soft-deletes and restores with a PUT of `deleted`, which needs change_<model>;
        # without it the actions are neither offered nor run (Django runs only offered ones).
        if not self.has_change_permission(request):
            return actions
        for name in ("soft_delete", "restore"):
            func = getattr(type(self), name)
            actions[name] = (func, name, func.short_description)
        return actions

    def has_delete_permission(self, request, obj=None):
        return False  # records are soft-deleted (see the actions), never erased

    def _set_deleted(self, request, queryset, deleted: bool, verb: str) -> None:
        service = type(self).update_service
        self.run_service(
            request,
            queryset,
            lambda obj: service(user=request.user, instance=obj, deleted=deleted),
            verb,
        )

    def soft_delete(self, request, queryset):
        self._set_deleted(request, queryset, True, "Deleted")

    soft_delete.short_description = "Soft-delete the selected records"

    def restore(self, request, queryset):
        self._set_deleted(request, queryset, False, "Restored")

    restore.short_description = "Restore the selected records"


class HistoryChangesDisplay(HistoricalRecordContextHelper):
    """The history page's "Changes" column: a value that was (or became) blank reads as the
    admin's empty value ("-"), as on the change page. simple-history shows a blank relation as
    "Deleted user (pk=None)", a record that never existed; one that did exist and was deleted
    since keeps its "Deleted <type> (pk=N)".

    A related record is read as it is now, whatever agency it is in: one the staff member may
    not see now (a parent client moved to another agency since) is named by its id only,
    "client 12 (not visible)", never by its current name (`visible`: `VisibleRelations`); a user
    (an "updated by") they may not see named is `NOT_VISIBLE` (apps.core.people)."""

    def __init__(self, model, historical_record, *, empty: str, visible, **kwargs):
        super().__init__(model, historical_record, **kwargs)
        self.empty = empty
        self.visible = visible
        previous = historical_record.previous
        self.previous_shown = previous is None or previous.shown

    def format_delta_change(self, change):
        # A version is diffed against the one before it even when that one was recorded in
        # another agency (a move in): which fields changed is ours, what they held there is not.
        formatted = super().format_delta_change(change)
        if self.previous_shown:
            return formatted
        return dataclasses.replace(formatted, old=NOT_VISIBLE)

    def prepare_delta_change_value(self, change, value):
        if value is None or value == "" or (isinstance(value, DeletedObject) and value.pk is None):
            return self.empty
        if isinstance(value, Model) and not self.visible(value):
            if isinstance(value, get_user_model()):
                return NOT_VISIBLE
            return f"{value._meta.verbose_name} {value.pk} (not visible)"
        return super().prepare_delta_change_value(change, value)


class VisibleRelations:
    """Which of the agency-scoped records that versions name (their foreign keys) a staff
    member may see now: one query per related model for a page of versions, whatever its size;
    and which users they may see named (`people_for`: one query for the users they name)."""

    def __init__(self, versions: list, user):
        self.people = people_for(user)
        self.people.expect(versions)  # their authors and every user they name, read together
        named: dict = {}
        for field in versions[0].tracked_fields if versions else ():
            model = getattr(field, "related_model", None)
            if model is not None and isinstance(model._default_manager.all(), AgencyScopedQuerySet):
                ids = named.setdefault(model, set())
                ids.update(getattr(v, field.attname) for v in versions)
        self.seen = {}
        for model, ids in named.items():
            rows = _scoped(model._default_manager.filter(pk__in=ids - {None}), user)
            self.seen[model] = set(rows.values_list("pk", flat=True))

    def __call__(self, record) -> bool:
        if isinstance(record, get_user_model()):
            return self.people.sees(record.pk)
        seen = self.seen.get(type(record))
        return seen is None or record.pk in seen


class ScopedHistoryAdmin(SimpleHistoryAdmin, AgencyScopedAdmin):
    """The audit trail in the admin, for records the staff member may see and no others.

    Both history pages (the list and one version) first find the record through the same
    scoped queryset as the changelist, so another agency's record, or a history id that
    belongs to another record, is a 404. A version is shown read-only: django-simple-history
    would save a POST to that page with the ORM, around the services (their rules, audit and
    events), so a POST is refused and changes are made on the record's own change page.
    """

    def _visible_or_404(self, request, object_id):
        pk = self.model._meta.pk.to_python(object_id) if is_ascii_int(str(object_id)) else None
        if pk is None or not self.get_queryset(request).filter(pk=pk).exists():
            raise Http404("No such record.")
        return pk

    def history_view(self, request, object_id, extra_context=None):
        self._visible_or_404(request, object_id)
        return super().history_view(request, object_id, extra_context)

    def get_history_queryset(self, request, history_manager, pk_name, object_id):
        # Only the versions recorded while the record was in the staff member's agencies: a
        # record that moved in shows nothing of its time in the agency it left.
        versions = super().get_history_queryset(request, history_manager, pk_name, object_id)
        return versions_for_user(versions, request.user)

    def set_history_delta_changes(self, request, historical_records, foreign_keys_are_objs=True):
        # Each version diffed against the one recorded just before it, whether on this page, on
        # the next or not shown (`versions_with_previous`: one query for the page), not against
        # the next one listed; and one look-up of what the versions name for the whole page.
        versions = list(historical_records)
        if versions:
            pk_name = self.model._meta.pk.attname
            every = super().get_history_queryset(
                request,
                get_history_manager_for_model(self.model),
                pk_name,
                getattr(versions[0], pk_name),
            )
            versions_with_previous(versions, versions_marked(every, request.user))
        earlier = [v.previous for v in versions if v.previous is not None]
        visible = VisibleRelations([*versions, *earlier], request.user)
        if not visible.people.everyone:
            # "Changed by" as every who field (apps.core.people); Django's link for a superuser.
            for version in versions:
                version.changed_by = who_label(visible.people, version, "history_user", empty="-")
        for version in versions:
            if version.previous is None:
                continue
            delta = version.diff_against(
                version.previous, foreign_keys_are_objs=foreign_keys_are_objs
            )
            helper = HistoryChangesDisplay(
                self.model, version, empty=self.get_empty_value_display(), visible=visible
            )
            version.history_delta_changes = helper.context_for_delta_changes(delta)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        pk = self._visible_or_404(request, object_id)
        # django-simple-history looks the version up with the path's text as it is: "abc" was
        # a ValueError (500). A version id is a number of the history table's key, or no page.
        version = id_or_none(str(version_id))
        if version is None:
            raise Http404("No such version.")
        # A version of the record recorded in one of the staff member's agencies, as the
        # history page lists them: one from before the record moved in is the old agency's.
        versions = get_history_manager_for_model(self.model).filter(
            **{self.model._meta.pk.attname: pk, "history_id": version}
        )
        if not versions_for_user(versions, request.user).exists():
            raise Http404("No such version.")
        if request.method not in ("GET", "HEAD"):
            raise PermissionDenied("The history is read-only.")
        return super().history_form_view(request, object_id, version_id, extra_context)

    def revert_disabled(self, request, obj=None):
        return True  # changes go through the services; the history is read-only


class NamedRowsInline(admin.TabularInline):
    """A tabular inline whose inputs each have an accessible name, "<column>, row <n>" ("Amount,
    row 2"; "…, new row" in the row "Add another" copies): a form field's label stands beside
    it, but a table's column header is in another row, which no input names, so a screen
    reader said only "edit text" (WCAG 1.3.1, 4.1.2). Every tabular inline of the project's
    admins is one (`AgencyScopedInline` and the read-only logs)."""

    def get_formset(self, request, obj=None, **kwargs):
        formset_class = super().get_formset(request, obj, **kwargs)

        class NamedRowsFormSet(formset_class):
            def add_fields(self, form, index):
                super().add_fields(form, index)  # the row's DELETE box too
                row = "new row" if index is None else f"row {index + 1}"
                for field in form.fields.values():
                    if not field.widget.is_hidden:  # each form's own copy of the widget
                        name = f"{capfirst(field.label or '')}, {row}"
                        field.widget.attrs.setdefault("aria-label", name)

        NamedRowsFormSet.__name__ = formset_class.__name__
        return NamedRowsFormSet


class AgencyScopedInline(_ScopedRows, NamedRowsInline):
    """An inline of an agency-scoped record's page.

    `of_parents_client`: the relations (autocomplete boxes) whose save takes a record of the
    parent's own client only (a driver link's unit: a unit of the driver's client); on a saved
    parent's page their boxes offer that client's records only (`SAME_CLIENT`). The save still
    checks: a mark only changes what a box offers."""

    extra = 0
    show_change_link = True
    of_parents_client: tuple[str, ...] = ()

    def get_formset(self, request, obj=None, **kwargs):
        client_id = getattr(obj, "client_id", None)
        if self.of_parents_client and client_id is not None:
            # Marked as each form class makes its fields (a subclass of the form, such as
            # ServiceInline's, makes its own), for this request's parent.
            def formfield(db_field, **field_kwargs):
                field = self.formfield_for_dbfield(db_field, request, **field_kwargs)
                box = getattr(getattr(field, "widget", None), "widget", None)  # in its wrapper
                if db_field.name in self.of_parents_client and isinstance(
                    box, KeyCheckedAutocompleteSelect
                ):
                    box.asks = {**box.asks, SAME_CLIENT: str(client_id)}
                return field

            kwargs.setdefault("formfield_callback", formfield)
        return super().get_formset(request, obj, **kwargs)


class FirstRowsFormSet(BaseInlineFormSet):
    """The first `SHOWN` related records, in the inline's order: a page shows what a person
    reads, not a fleet (the 2,500-unit client's page was 5 MB and 2.3 s; the 250,000-unit
    one would have outlasted the worker's timeout; issue 18). Its forms are view-only, so a
    save of the page leaves them alone whatever was added meanwhile."""

    SHOWN = 50

    def get_queryset(self):
        if not hasattr(self, "_first_rows"):
            self._first_rows = self.page_columns(list(super().get_queryset()[: self.SHOWN]))
        return self._first_rows

    def page_columns(self, rows: list) -> list:
        """What the inline shows of each row it shows, read for those rows only."""
        return rows


class ReadOnlyInline(ReadOnlyAdminMixin, AgencyScopedInline):
    """An inline that shows related records; they are edited on their own pages. At most
    `FirstRowsFormSet.SHOWN` of them: past that, its heading says how many there are, and
    the records' own list has them all."""

    can_delete = False
    formset = FirstRowsFormSet

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        if obj is not None and obj.pk is not None:
            related = self.get_queryset(request).filter(**{formset.fk.name: obj})
            total = counting.count(related)
            # Asked more than once a page (the fieldsets ask for the form too): named once.
            plural = self.__dict__.setdefault("_plural", self.verbose_name_plural)
            if total > FirstRowsFormSet.SHOWN:
                self.verbose_name_plural = (
                    f"{plural} (the first {FirstRowsFormSet.SHOWN} of {total:,}; "
                    f"the {self.model._meta.verbose_name_plural} list has them all)"
                )
        return formset


class ServiceInline(AgencyScopedInline):
    """Rows added here are created by a service, validated first in a rolled-back savepoint
    like ServiceFormAdmin's form; existing rows are shown read-only and never deleted here.

    Only on a saved parent (its change page): the service needs the parent to exist. The
    parent's admin must be a ServiceFormAdmin, whose save_formset calls `service_create`.
    """

    can_delete = False

    def service_create(self, request, parent, cleaned_data: dict):
        raise NotImplementedError

    def has_add_permission(self, request, obj=None):
        return obj is not None and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return False

    def get_formset(self, request, obj=None, **kwargs):
        formset_class = super().get_formset(request, obj, **kwargs)
        inline = self

        class ServiceInlineForm(formset_class.form):
            def _post_clean(self):
                super()._post_clean()
                if self.errors or obj is None or self.instance.pk or not self.has_changed():
                    return
                refusal = trial_refusal(
                    lambda: inline.service_create(request, obj, self.cleaned_data)
                )
                if refusal is not None:
                    service_errors(self, refusal)

        formset_class.form = ServiceInlineForm
        formset_class.service_inline = inline
        return formset_class


class ServiceCollectionInline(AgencyScopedInline):
    """Rows the parent's service replaces as a whole (a policy's limits, its rates).

    The formset validates as Django does, then runs the parent's update service with every
    row that stays (`service_changes`) inside a rolled-back savepoint, so the service's rules
    decide; the parent's ServiceFormAdmin then passes them to its one call for real. Shown on
    saved parents only.
    """

    update_service = None  # the parent's `<entity>_update(*, user, instance, **changes)`

    def service_changes(self, rows: list[dict]) -> dict:
        """The update service's keyword argument that replaces the collection with `rows`."""
        raise NotImplementedError

    def service_replace(self, request, parent, rows: list[dict]):
        changes = self.service_changes(rows)
        return type(self).update_service(user=request.user, instance=parent, **changes)

    def has_add_permission(self, request, obj=None):
        return obj is not None and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return obj is not None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return obj is not None and super().has_delete_permission(request, obj)

    @staticmethod
    def kept_rows(formset) -> list[dict]:
        return [
            row.cleaned_data
            for row in formset.forms
            if row.cleaned_data and not row.cleaned_data.get("DELETE")
        ]

    def get_formset(self, request, obj=None, **kwargs):
        formset_class = super().get_formset(request, obj, **kwargs)
        inline = self

        class ServiceCollectionFormSet(formset_class):
            service_collection = inline

            def clean(self):
                super().clean()
                if obj is None or any(self.errors):
                    return
                refusal = trial_refusal(
                    lambda: inline.service_replace(request, obj, inline.kept_rows(self))
                )
                if refusal is not None:
                    messages_ = getattr(refusal, "messages", None) or [str(refusal)]
                    raise ValidationError(messages_) from refusal

        return ServiceCollectionFormSet


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Read-only: which keyed requests were seen, and what they were answered; kept until they
    expire (the prune job), not deleted here: a replay must find its answer.

    The stored answers belong to callers of every agency, so only superusers see them.
    """

    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser

    list_display = ["key", "method", "path", "user", "response_status", "created_at", "expires_at"]
    list_filter = ["method", "response_status", "created_at"]
    search_fields = ["key", "path", "user__username"]
    list_select_related = ["user"]
    readonly_fields = [
        "user",
        "method",
        "path",
        "key",
        "request_hash",
        "response_status",
        "response_body",
        "response_headers",
        "created_at",
        "expires_at",
    ]
