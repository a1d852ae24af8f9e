"""The back-office: Django's admin, branded, with a dashboard of what staff check first.

It sits above every domain app (it counts their records), so it lives here rather than in
apps.core, which imports no domain app."""

from __future__ import annotations

import datetime as dt
from functools import wraps

from django.contrib import admin
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.urls import reverse

from apps.clients.models import Client
from apps.core import counting
from apps.core.dates import today
from apps.coverages.selectors import covered_today_filter
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle


class BackOfficeSite(admin.AdminSite):
    site_header = "Coverage Verification — Back Office"
    site_title = "Coverage Verification back office"
    index_title = "Today at a glance"
    index_template = "admin/backoffice_index.html"

    def index(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "dashboard": dashboard_for(request.user)}
        return super().index(request, extra_context)

    def admin_view(self, view, cacheable=False):
        """Every admin page, on every model: URL lookups that run regular expressions are
        refused (400) before any query, since one crafted pattern can pin a database core."""
        inner = super().admin_view(view, cacheable)

        @wraps(view)
        def guarded(request, *args, **kwargs):
            for key in request.GET:
                if runs_regex(key):
                    raise DisallowedModelAdminLookup(f"Filtering by {key} is not allowed.")
            return inner(request, *args, **kwargs)

        return guarded


REGEX_LOOKUPS = {"regex", "iregex"}


def runs_regex(lookup: str) -> bool:
    """Whether a changelist URL parameter names a regular-expression lookup."""
    return any(part.lower() in REGEX_LOOKUPS for part in lookup.split("__")[1:])


def dashboard_for(user) -> list[dict]:
    """The four counts of the admin index, each scoped to the user's agencies, with a link;
    counted as the lists count (`apps.core.counting`: kept until a write), since the big
    agency's units in force and not covered cost about 80 ms each to count (issue 18)."""
    on = today()
    vehicles = (
        Vehicle.objects.for_user(user).live("client").annotate(covered=covered_today_filter(on))
    )
    expiring = (
        Policy.objects.for_user(user)
        .in_force_on(on)
        .filter(expiration_date__lte=on + dt.timedelta(days=30))
    )
    return [
        {
            "label": "Clients",
            "count": counting.count(Client.objects.for_user(user).live()),
            "url": reverse("admin:clients_client_changelist") + "?deleted__exact=0",
        },
        {
            "label": "Units in force",
            "count": counting.count(vehicles.filter(covered=True)),
            "url": reverse("admin:vehicles_vehicle_changelist") + "?covered=yes",
        },
        {
            "label": "Units not covered",
            "count": counting.count(vehicles.filter(covered=False)),
            "url": reverse("admin:vehicles_vehicle_changelist") + "?covered=no",
        },
        {
            "label": "Policies expiring in 30 days",
            "count": counting.count(expiring),
            "url": reverse("admin:policies_policy_changelist") + "?expiring=30",
        },
    ]
