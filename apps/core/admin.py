"""Admin machinery: staff who are not superusers see only their agencies' data."""

from __future__ import annotations

from django.contrib import admin

from apps.core.models import AgencyScopedQuerySet


def _scoped(queryset, user):
    if isinstance(queryset, AgencyScopedQuerySet):
        return queryset.for_user(user)
    return queryset


class AgencyScopedAdmin(admin.ModelAdmin):
    """Lists, detail pages, autocompletes and choices all go through `for_user`."""

    list_per_page = 100

    def get_queryset(self, request):
        return _scoped(super().get_queryset(request), request.user)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and hasattr(field, "queryset"):
            field.queryset = _scoped(field.queryset, request.user)
        return field

    def save_model(self, request, obj, form, change):
        if hasattr(obj, "updated_by_id"):
            obj.updated_by = request.user
            if not change:
                obj.created_by = request.user
        super().save_model(request, obj, form, change)


class AgencyScopedInline(admin.TabularInline):
    extra = 0
    show_change_link = True

    def get_queryset(self, request):
        return _scoped(super().get_queryset(request), request.user)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and hasattr(field, "queryset"):
            field.queryset = _scoped(field.queryset, request.user)
        return field
