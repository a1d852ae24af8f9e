"""Groups, users, memberships, agencies and API keys of the demo world, of the benchmark's (and
of any fresh installation), each found if it exists, else created: seeding twice changes
nothing. Users and groups are Django's own records, written with django.contrib.auth's API as
its UserAdmin does; memberships, agencies and API keys go through their services."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db.models import Q

from apps.accounts.models import ApiKey, hash_api_key
from apps.accounts.services import api_key_create
from apps.agencies.models import Agency, AgencyMembership
from apps.agencies.services import agency_create, membership_create

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


def user_ensure(
    username: str,
    *,
    password: str,
    group: Group | None = None,
    agency=None,
    staff: bool = False,
    superuser: bool = False,
    by=None,
):
    """The user with this password, group and flags; a member of `agency` (granted `by` a
    superuser through `membership_create`) when one is named."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created or not user.check_password(password):
        user.set_password(password)
    user.is_staff = staff or superuser
    user.is_superuser = superuser
    user.save()
    if group is not None:
        user.groups.set([group])
    if (
        agency is not None
        and not AgencyMembership.objects.filter(user=user, agency=agency).exists()
    ):
        membership_create(user=by, member_id=user.pk, agency_id=agency.pk)
    return user


def agency_ensure(root, *, name: str, member: str | None = None, **fields) -> Agency:
    """The agency of this name, created by the superuser `root` with `fields` when missing;
    with `member`, first the agency that user (the demo's staff member of it) belongs to,
    whatever staff have renamed it since: seeding again never adds a second one."""
    if member is not None:
        membership = (
            AgencyMembership.objects.filter(user__username=member)
            .select_related("agency")
            .order_by("pk")
            .first()
        )
        if membership is not None:
            return membership.agency
    return Agency.objects.filter(name=name).first() or agency_create(user=root, name=name, **fields)


def api_key_ensure(*, name: str, raw_key: str) -> None:
    """The integration key `raw_key` exists (created under `name` when missing)."""
    if not ApiKey.objects.filter(key_hash=hash_api_key(raw_key)).exists():
        api_key_create(name=name, raw_key=raw_key)
