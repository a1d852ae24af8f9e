"""What moves the principals' generation (apps.accounts.principal): every save, delete and
relation change Django makes to a row the caller's statement reads, wherever it is made (the
API, the admin, a service, a command, a shell), and to the permission sets the caller's
permissions come from. A queryset's `update()` and `bulk_*`, and writes to the relation tables'
own models, send no signal (nothing in the application writes them so): they take effect within
PRINCIPAL_CACHE_SECONDS, as raw SQL does.

Receivers, not calls in each service: a row of these models written by any code path, the admin's
own forms and Django's cascades included, must retire every cached caller, and a signal is the
one place every such write passes. A user's save of `last_login` alone changes nothing a caller
is; a save of its password does (the cached caller keeps its digest, which ends the tokens issued
under the old one: apps.accounts.tokens), wherever it is made: the admin's password form,
`changepassword`, `set_password` and `save`, a hash upgraded at login.
"""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db.models.signals import m2m_changed, post_delete, post_save

from apps.accounts.models import ApiKey
from apps.accounts.principal import principals_changed

_IGNORED_USER_FIELDS = frozenset({"last_login"})


def _saved(sender, instance, update_fields=None, using=None, **kwargs) -> None:
    if update_fields is not None and set(update_fields) <= _IGNORED_USER_FIELDS:
        return
    principals_changed(using)


def _deleted(sender, instance, using=None, **kwargs) -> None:
    principals_changed(using)


def _relation_changed(sender, action, using=None, **kwargs) -> None:
    if action in {"post_add", "post_remove", "post_clear"}:
        principals_changed(using)


def connect() -> None:
    user = get_user_model()
    membership = apps.get_model("agencies", "AgencyMembership")
    agency = apps.get_model("agencies", "Agency")
    for model in (user, ApiKey, membership, agency, Group, Permission):
        uid = f"principal:{model._meta.label}"
        post_save.connect(_saved, sender=model, dispatch_uid=uid)
        post_delete.connect(_deleted, sender=model, dispatch_uid=uid)
    for through in (user.groups.through, user.user_permissions.through, Group.permissions.through):
        m2m_changed.connect(_relation_changed, sender=through, dispatch_uid=f"principal:{through}")
