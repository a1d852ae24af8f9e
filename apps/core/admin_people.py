"""The admin's who columns: "Created by", "Updated by", "Uploaded by"… as a staff member may see
them (apps.core.people): the user, when a member of one of the staff member's agencies (or a
superuser); else `NOT_VISIBLE`. A superuser's pages are Django's own.

Django's columns and read-only fields get only the record, not the request: each who field a
list, a form or its fieldsets name is swapped, for the request, for a column that knows the
staff member (`who_columns`), the same one wherever the request asks, as Django's form matches
a fieldset's names with the read-only fields by identity.
"""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import FieldDoesNotExist

from apps.core.people import NOT_VISIBLE, People, is_who_field, people_for


def who_field(model, name):
    """The model field `name` is, when it is a who field (a `user_stamp`: a foreign key to the
    user without a reverse accessor; a membership's `user`, the member, is not one); else
    None."""
    if not isinstance(name, str):
        return None
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return None
    return field if is_who_field(field) else None


def who_label(people: People, record, field: str, *, empty: str) -> str:
    """What the admin shows of the user `record.<field>` names: its name, `empty` when it names
    nobody, or `NOT_VISIBLE`."""
    if getattr(record, f"{field}_id") is None:
        return empty
    name = people.name(record, field)
    return NOT_VISIBLE if name is None else name


def _column(request, model_admin, field):
    columns = request.__dict__.setdefault("_who_columns", {})
    key = (model_admin.model, field.name)
    if key not in columns:
        people = people_for(request.user)
        empty = model_admin.get_empty_value_display()

        @admin.display(description=field.verbose_name, ordering=field.name)
        def column(obj):
            return who_label(people, obj, field.name, empty=empty)

        column.__name__ = field.name  # the read-only field's CSS class, as before
        columns[key] = column
    return columns[key]


def who_columns(request, model_admin, names):
    """`names` (a list display, read-only fields, a fieldset's fields, nested as fieldsets
    allow), each who field swapped for its column; as they are for a superuser."""
    if people_for(request.user).everyone:
        return names
    swapped = []
    for name in names:
        if isinstance(name, list | tuple):
            swapped.append(type(name)(who_columns(request, model_admin, name)))
            continue
        field = who_field(model_admin.model, name)
        swapped.append(name if field is None else _column(request, model_admin, field))
    return type(names)(swapped) if isinstance(names, list | tuple) else swapped


class WhoColumnsMixin:
    """For a ModelAdmin or an inline: its who fields shown through `who_columns`."""

    def get_readonly_fields(self, request, obj=None):
        return who_columns(request, self, super().get_readonly_fields(request, obj))

    def get_fieldsets(self, request, obj=None):
        return [
            (title, {**options, "fields": who_columns(request, self, options["fields"])})
            for title, options in super().get_fieldsets(request, obj)
        ]

    def get_list_display(self, request):  # a ModelAdmin's (an inline has no list)
        return who_columns(request, self, super().get_list_display(request))

    # The people a page names are read together, once for the page (`People.expect`): a
    # list's rows, a form's record and its inlines' rows. A ModelAdmin's (an inline has none).

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        people_for(request.user).expect(changelist.result_list)
        return changelist

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        rows = [obj] if obj is not None else []
        for inline in context.get("inline_admin_formsets", ()):
            rows.extend(form.instance for form in inline.formset.forms)
        people_for(request.user).expect(rows)
        return super().render_change_form(request, context, add, change, form_url, obj)
