"""The back-office: Django's admin, branded, with a dashboard of what staff check first.

It sits above every domain app (it counts their records), so it lives here rather than in
apps.core, which imports no domain app."""

from __future__ import annotations

from functools import wraps

from django.contrib import admin
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.contrib.admin.models import LogEntry
from django.contrib.admin.views.main import IGNORED_PARAMS
from django.contrib.contenttypes import views as contenttype_views
from django.contrib.contenttypes.models import ContentType
from django.db import NotSupportedError
from django.http import Http404
from django.urls import path, reverse

from apps.backoffice.login import BackOfficeLoginForm
from apps.clients.models import Client
from apps.core import counting
from apps.core.admin_keys import record_key, visible_keys
from apps.core.dates import today
from apps.coverages.permissions import VEHICLE_VERIFICATION_PERMISSIONS
from apps.coverages.selectors import covered_today_filter
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle


class BackOfficeSite(admin.AdminSite):
    site_header = "Coverage Verification — Back Office"
    site_title = "Coverage Verification back office"
    index_title = "Today at a glance"
    index_template = "admin/backoffice_index.html"
    login_form = BackOfficeLoginForm

    def login(self, request, extra_context=None):
        """Django's admin login, its attempts counted with the API's (BackOfficeLoginForm):
        refused past a limit, the page is the form again with its message, as a 429."""
        response = super().login(request, extra_context)
        form = (getattr(response, "context_data", None) or {}).get("form")
        retry_after = getattr(form, "retry_after", None)
        if retry_after is not None:
            response.status_code = 429
            response["Retry-After"] = str(retry_after)
        return response

    def index(self, request, extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "dashboard": dashboard_for(request.user),
            "recent_actions": self.recent_actions(request),
        }
        return super().index(request, extra_context)

    def recent_actions(self, request, limit: int = 10) -> list[LogEntry]:
        """The staff member's last actions, for the index's "Recent actions", each marked
        `shown` when its record is one they may still see (`visible_keys`): only those name
        it. The name is the record's as it was (LogEntry.object_repr), so a record of an
        agency they no longer serve, moved to another agency, or deleted since, would show a
        name their lists no longer do. One query per kind of record among the entries."""
        entries = list(
            LogEntry.objects.filter(user_id=request.user.pk)
            .select_related("content_type")
            .order_by("-action_time")[:limit]
        )
        by_model: dict = {}
        for entry in entries:
            model = entry.content_type.model_class() if entry.content_type else None
            if model is not None:
                by_model.setdefault(model, []).append(entry)
        for entry in entries:
            entry.shown = False
        for model, logged in by_model.items():
            visible = visible_keys(self, request, model, {entry.object_id for entry in logged})
            for entry in logged:
                entry.shown = entry.object_id in visible
        return entries

    def get_urls(self):
        # Django's "view on site" redirect, in its place and under its name, scoped.
        return [
            path(
                "r/<path:content_type_id>/<path:object_id>/",
                self.admin_view(self.view_on_site),
                name="view_on_site",
            )
            if getattr(pattern, "name", None) == "view_on_site"
            else pattern
            for pattern in super().get_urls()
        ]

    def view_on_site(self, request, content_type_id, object_id):
        """Django's "view on site" redirect (r/<type>/<id>/) for a record the staff member may
        see in this admin, and no other: another agency's record, a model the site does not
        show them, an id that is no key of the model ("4" for a task's UUID, a 500 in Django's
        view) all answer the same 404."""
        key = record_key(ContentType._meta.pk, content_type_id)
        content_type = ContentType.objects.filter(pk=key).first() if key is not None else None
        model = content_type.model_class() if content_type is not None else None
        if model is None or not visible_keys(self, request, model, [object_id]):
            raise Http404("No such record.")
        return contenttype_views.shortcut(request, content_type_id, object_id)

    def admin_view(self, view, cacheable=False):
        """Every admin page, on every model: URL lookups that run regular expressions are
        refused (400) before any query, since one crafted pattern can pin a database core; so
        are, on a model's pages, lookups its database cannot run (SQLite has no `contains` on
        JSON), which would otherwise fail as the list is counted (a 500)."""
        inner = super().admin_view(view, cacheable)
        model_admin = getattr(view, "__self__", None)
        model = model_admin.model if isinstance(model_admin, admin.ModelAdmin) else None

        @wraps(view)
        def guarded(request, *args, **kwargs):
            for key in request.GET:
                if runs_regex(key) or (
                    model is not None
                    and key not in IGNORED_PARAMS
                    and not database_runs(model, key, request.GET.getlist(key))
                ):
                    raise DisallowedModelAdminLookup(f"Filtering by {key} is not allowed.")
            return inner(request, *args, **kwargs)

        return guarded


REGEX_LOOKUPS = {"regex", "iregex"}


def runs_regex(lookup: str) -> bool:
    """Whether a changelist URL parameter names a regular-expression lookup."""
    return any(part.lower() in REGEX_LOOKUPS for part in lookup.split("__")[1:])


def database_runs(model, lookup: str, values: list[str]) -> bool:
    """Whether the database can run a URL lookup on the model: False only when building its
    SQL (no query is made) says the backend does not support it. A parameter that is no lookup
    of the model (a list filter's own, a view's) or a value the lookup cannot take is not this
    guard's to judge: the changelist answers those as it always has (the unfiltered list)."""
    queryset = model._base_manager.all()
    for value in values:
        try:
            filtered = queryset.filter(**{lookup: value})
            filtered.query.get_compiler(using=filtered.db).as_sql()
        except NotSupportedError:
            return False
        except Exception:  # FieldError, ValueError, ValidationError...: as Django's ChangeList
            continue
    return True


def dashboard_for(user) -> list[dict]:
    """The counts of the admin index, each scoped to the user's agencies, with a link; counted
    as the lists count (`apps.core.counting`: kept until a write), since the big agency's units
    in force and not covered cost about 80 ms each to count (issue 18). Each is shown, and
    counted, only to staff holding what its list needs (the permissions the API asks for that
    data: whether a unit is covered is verification's answer)."""
    on = today()
    vehicles = (
        Vehicle.objects.for_user(user).live("client").annotate(covered=covered_today_filter(on))
    )
    changelist = "admin:{}_changelist".format
    counts = [
        (
            ("clients.view_client",),
            "Clients",
            Client.objects.for_user(user).live(),
            reverse(changelist("clients_client")) + "?deleted__exact=0",
        ),
        (
            VEHICLE_VERIFICATION_PERMISSIONS,
            "Units in force",
            vehicles.filter(covered=True),
            reverse(changelist("vehicles_vehicle")) + "?covered=yes",
        ),
        (
            VEHICLE_VERIFICATION_PERMISSIONS,
            "Units not covered",
            vehicles.filter(covered=False),
            reverse(changelist("vehicles_vehicle")) + "?covered=no",
        ),
        (
            ("policies.view_policy",),
            "Policies expiring in 30 days",
            Policy.objects.for_user(user).expiring_within(on, 30),
            reverse(changelist("policies_policy")) + "?expiring=30",
        ),
    ]
    return [
        {"label": label, "count": counting.count(rows), "url": url}
        for needs, label, rows, url in counts
        if user.has_perms(needs)
    ]
