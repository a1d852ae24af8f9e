"""Groups, users and the API key of the demo world (and of any fresh installation)."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission
from django.db.models import Q

# Apps whose records agency staff work on through the API and the admin.
BUSINESS_APPS = [
    "clients",
    "policies",
    "vehicles",
    "drivers",
    "coverages",
    "documents",
    "reports",
    "compliance",
]
REFERENCE_APPS = ["masterdata", "agencies"]

MANAGER_GROUP = "Agency manager"
VIEWER_GROUP = "Agency viewer"


def groups_ensure() -> tuple[Group, Group]:
    """Create or refresh the two standard groups with the permissions that exist now."""
    manager, _ = Group.objects.get_or_create(name=MANAGER_GROUP)
    viewer, _ = Group.objects.get_or_create(name=VIEWER_GROUP)
    business = Q(content_type__app_label__in=BUSINESS_APPS)
    reference_view = Q(content_type__app_label__in=REFERENCE_APPS, codename__startswith="view_")
    # Webhook subscriptions (contract section 14) are managed by agency managers only.
    webhooks = Q(content_type__app_label="webhooks", content_type__model="webhook")
    manager.permissions.set(Permission.objects.filter(business | reference_view | webhooks))
    viewer.permissions.set(
        Permission.objects.filter(
            (business | reference_view)
            & (Q(codename__startswith="view_") | Q(codename__startswith="view"))
        )
    )
    return manager, viewer
