"""What an admin URL or form names: a key as staff send it, and the records they may see.

Apart from apps.core.admin, which registers admins on the site as it is imported, so that the
site itself (apps.backoffice.site) can use it.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, connections, router
from django.db.models import IntegerField


def record_key(field, value, *, using: str | None = None):
    """`value` as sent (a URL's text, a form's, a log entry's object id) read as a value of the
    key column `field`, or None when no row could have it: not of the column's type ("abc" or
    "4" for a UUID) or past an integer column's range. Looking such a value up was a server
    error (a ValidationError, an OverflowError), where it names no record."""
    try:
        key = field.to_python(value)
    except ValidationError:
        return None
    if key is None:
        return None
    if isinstance(field, IntegerField):
        ops = connections[using or DEFAULT_DB_ALIAS].ops
        low, high = ops.integer_field_range(field.get_internal_type())
        if (low is not None and key < low) or (high is not None and key > high):
            return None
    return key


def visible_keys(admin_site, request, model, values) -> set[str]:
    """Which of `values` (keys of `model`, as text) name a record the staff member may see in
    `admin_site`: through the model's own admin, its view permission and its scoped
    `get_queryset`, in one query; none for a model the site does not show them."""
    model_admin = admin_site._registry.get(model)
    if model_admin is None or not model_admin.has_view_permission(request):
        return set()
    pk = model._meta.pk
    using = router.db_for_read(model)
    keys = {}
    for value in values:
        key = record_key(pk, value, using=using)
        if key is not None:
            keys[value] = key
    if not keys:
        return set()
    queryset = model_admin.get_queryset(request).filter(pk__in=set(keys.values()))
    found = set(queryset.values_list("pk", flat=True))
    return {value for value, key in keys.items() if key in found}
