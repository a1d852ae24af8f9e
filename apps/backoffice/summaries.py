"""The change-page summaries of the back-office (vehicle, driver, client).

They answer the questions staff ask all day ("is unit 101 covered, since when, under which
policy?") from the same selectors as the API and verification, so the admin can never
disagree with what an integrator is told. Every query is scoped to the staff member's
agencies. They read several domain apps, so they live above them, not in apps.core.

Each section is shown (`shows`, and read at all) only to staff holding the view permission the
API asks for its data, from the definitions the API uses: verification's answer and the
compliance verdict (apps.coverages.permissions), policies (policies.view_policy), drivers,
vehicles, each module's documents (apps.documents.models.module_permission), the certificate
button (apps.certificates.permissions). Seeing the record whose page it is grants none of them:
a staff member who may see a client but not policies sees no policy of it here either. A section
left out is left out silently, as the page's inlines of models the staff member may not view.
"""

from __future__ import annotations

import datetime as dt

from django.db.models import Q
from django.urls import reverse

from apps.certificates.permissions import (
    CLIENT_CERTIFICATE_PERMISSIONS,
    VEHICLE_CERTIFICATE_PERMISSIONS,
)
from apps.compliance.selectors import requirement_profile_resolve
from apps.core import counting
from apps.core.admin_display import admin_url, coverage_status_label, human_size, when
from apps.core.admin_people import who_label
from apps.core.dates import us_text
from apps.core.history import changed_fields
from apps.core.people import people_for
from apps.core.permissions import view_permission
from apps.coverages.models import DriverCoverage, VehicleCoverage, periods_covering
from apps.coverages.permissions import (
    CLIENT_VERIFICATION_PERMISSIONS,
    PROFILE_PERMISSION,
    VEHICLE_VERIFICATION_PERMISSIONS,
)
from apps.coverages.selectors import (
    ClientVerification,
    covered_today_filter,
    verify_clients,
    verify_vehicles,
)
from apps.coverages.serializers import AssignmentSummarySerializer, set_context_unit
from apps.documents.models import Document, Module, module_permission
from apps.drivers.models import Driver, DriverVehicle
from apps.drivers.selectors import driver_history
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle
from apps.vehicles.selectors import vehicle_history

AUDIT_ROWS = 10  # the newest changes a summary lists; the history page has them all


def _history(versions, *, user) -> list[dict]:
    """Audit records (a selector's, each with the one before it), each with the fields it
    changed (`changed_fields`, as the API's audit) and its author as `user` may see them named
    (apps.core.people)."""
    people = people_for(user)
    versions = list(versions)
    people.expect(versions, ("history_user", "updated_by"))
    kinds = {"+": "Created", "~": "Changed", "-": "Deleted"}
    return [
        {
            "when": when(version.history_date),
            "user": _who(version, people),
            "kind": kinds.get(version.history_type, version.history_type),
            "changed": ", ".join(changed_fields(version)),
        }
        for version in versions
    ]


def _who(record, people) -> str:
    """Who made a change: the request's user, else (a command, a seed) the record's own
    updated_by stamp; named only if `people` says so, else `NOT_VISIBLE`."""
    if record.history_user_id:
        return who_label(people, record, "history_user", empty="—")
    if getattr(record, "updated_by_id", None) is not None:
        return f"{who_label(people, record, 'updated_by', empty='—')} (no request)"
    return "—"


def _us_date(value: dt.date | None) -> str:
    return us_text(value, "/") if value else "—"


def _timeline(coverages, on: dt.date, *, unit) -> list[dict]:

    rows = []
    context = {"on": on}
    set_context_unit(context, unit, coverages)
    for coverage in coverages:
        summary = AssignmentSummarySerializer(coverage, context=context).data
        rows.append(
            {
                **summary,
                "status_label": coverage_status_label(coverage.coverage_status),
                "added": _us_date(coverage.policy_added_date),
                "removed": _us_date(coverage.policy_removed_date),
                "policy_url": reverse("admin:policies_policy_change", args=[coverage.policy_id]),
                "coverage_url": admin_url(coverage),
            }
        )
    return rows


DOCUMENTS_TITLES = {
    (True, True): "Documents (client and policies)",
    (True, False): "Client documents",
    (False, True): "Policy documents",
}


def _documents(user, *, client_id: int, policy_ids) -> dict | None:
    """The live documents of the client and of these policies, each module's only for staff
    with the API's view permission on that module's documents, under a title naming what is
    listed; None when neither. A policy document names its policy only to staff who may view
    policies."""
    client_files = user.has_perm(module_permission("view", Module.CLIENT))
    policy_files = user.has_perm(module_permission("view", Module.POLICY))
    if not (client_files or policy_files):
        return None
    listed = Q(pk__in=[])
    if client_files:
        listed |= Q(client_id=client_id, policy__isnull=True)
    if policy_files:
        listed |= Q(policy_id__in=list(policy_ids))
    documents = (
        Document.objects.for_user(user)
        .live()
        .filter(listed)
        .select_related("policy")
        .order_by("-uploaded_at", "id")
    )
    policy_numbers = user.has_perm(view_permission(Policy))
    rows = [
        {
            "file_name": d.file_name,
            "module": d.get_module_display(),
            "policy": d.policy.policy_number if d.policy_id and policy_numbers else "",
            "size": human_size(d.size),
            "uploaded_at": when(d.uploaded_at),
            "url": reverse("admin:documents_document_download", args=[d.pk]),
            "change_url": admin_url(d),
        }
        for d in documents
    ]
    return {"title": DOCUMENTS_TITLES[client_files, policy_files], "rows": rows}


_TIMELINE_RELATIONS = ("policy", "policy__coverage_type", "policy__insurer")


def _periods(coverages) -> list:
    """A vehicle's or driver's coverages, newest first, with what the timeline shows of them."""
    return list(
        coverages.select_related(*_TIMELINE_RELATIONS).order_by("-policy_added_date", "-id")
    )


def vehicle_summary(*, user, vehicle, on: dt.date) -> dict:
    """Coverage timeline, today's verification, drivers, lienholder, documents, audit; each
    section as `shows` allows (the module's docstring)."""
    shows = {
        "verification": user.has_perms(VEHICLE_VERIFICATION_PERMISSIONS),
        "policies": user.has_perm(view_permission(Policy)),
        "drivers": user.has_perm(view_permission(Driver)),
        "certificate": user.has_perms(VEHICLE_CERTIFICATE_PERMISSIONS),
    }
    periods = _periods(VehicleCoverage.objects.filter(vehicle=vehicle))
    timeline = _timeline(periods, on, unit=vehicle) if shows["policies"] else []
    verification = None
    if shows["verification"]:
        # Today's verification is the verification endpoint's own answer for this VIN.
        matches = [
            r
            for r in verify_vehicles(user=user, on=on, vin=vehicle.serial_number)
            if r.vehicle.id == vehicle.pk
        ]
        verification = matches[0] if matches else None
    return {
        "on": on,
        "shows": shows,
        "verification": verification,
        "in_force": [row for row in timeline if row["covered"]],
        "timeline": timeline,
        "drivers": _vehicle_drivers(vehicle, on, coverage=shows["policies"])
        if shows["drivers"]
        else [],
        "lienholder": vehicle.lienholder,
        "lienholder_url": admin_url(vehicle.lienholder) if vehicle.lienholder_id else "",
        "documents": _documents(
            user, client_id=vehicle.client_id, policy_ids={p.policy_id for p in periods}
        ),
        "history": _history(vehicle_history(vehicle, user=user, newest=AUDIT_ROWS), user=user),
        "history_url": admin_url(vehicle, "history"),
        "certificate_url": reverse("admin:vehicles_vehicle_certificate", args=[vehicle.pk])
        if shows["certificate"]
        else "",
    }


def _vehicle_drivers(vehicle, on: dt.date, *, coverage: bool) -> list[dict]:
    """The drivers linked to the vehicle, each with whether an OA/DD period covers them today
    when `coverage` (policy data) may be shown."""
    links = list(
        DriverVehicle.objects.filter(vehicle=vehicle)
        .select_related("driver", "driver__client")
        .order_by("driver__last_name", "driver__first_name", "id")
    )
    driver_coverages: dict[int, list] = {}
    if coverage:
        for period in DriverCoverage.objects.filter(
            driver_id__in=[link.driver_id for link in links]
        ).select_related(*_TIMELINE_RELATIONS):
            driver_coverages.setdefault(period.driver_id, []).append(period)
    return [
        {
            "name": str(link.driver),
            "license": link.driver.license_number,
            "url": admin_url(link.driver),
            # Verified when an OA/DD period covers them today, as the API says.
            "verified": bool(
                periods_covering(link.driver, on, driver_coverages.get(link.driver_id, []))
            )
            if coverage
            else None,
        }
        for link in links
    ]


def driver_summary(*, user, driver, on: dt.date) -> dict:
    """The driver's OA/DD timeline, today's verification, vehicles, documents, audit; each
    section as `shows` allows (the module's docstring)."""
    shows = {
        "policies": user.has_perm(view_permission(Policy)),
        "vehicles": user.has_perm(view_permission(Vehicle)),
    }
    periods = _periods(DriverCoverage.objects.filter(driver=driver))
    timeline = _timeline(periods, on, unit=driver) if shows["policies"] else []
    vehicles = (
        [
            {"name": str(link.vehicle), "url": admin_url(link.vehicle)}
            for link in DriverVehicle.objects.filter(driver=driver)
            .select_related("vehicle")
            .order_by("vehicle__unit", "id")
        ]
        if shows["vehicles"]
        else []
    )
    return {
        "on": on,
        "shows": shows,
        "verified": any(row["covered"] for row in timeline),
        "in_force": [row for row in timeline if row["covered"]],
        "timeline": timeline,
        "vehicles": vehicles,
        "documents": _documents(
            user, client_id=driver.client_id, policy_ids={p.policy_id for p in periods}
        ),
        "history": _history(driver_history(driver, user=user, newest=AUDIT_ROWS), user=user),
        "history_url": admin_url(driver, "history"),
    }


def client_summary(*, user, client, on: dt.date) -> dict:
    """Policies in force, today's verification and compliance, units covered and not covered
    today, and a certificate link; each section as `shows` allows (the module's docstring)."""
    verifies = user.has_perms(CLIENT_VERIFICATION_PERMISSIONS)
    shows = {
        "verification": verifies,
        # The units' coverage, in the verification's box: what vehicle verification answers.
        "units": verifies and user.has_perms(VEHICLE_VERIFICATION_PERMISSIONS),
        "compliance": verifies and user.has_perm(PROFILE_PERMISSION),
        "policies": user.has_perm(view_permission(Policy)),
        "certificate": user.has_perms(CLIENT_CERTIFICATE_PERMISSIONS),
    }
    in_force = []
    if shows["policies"]:
        in_force = list(
            Policy.objects.filter(client=client)
            .in_force_on(on)
            .select_related("coverage_type", "insurer")
            .order_by("coverage_type__code", "policy_number")
        )
    total = covered = 0
    if shows["units"]:
        # Counted in SQL, as the lists count (kept under the data version until a write): the
        # 250,000-unit fleet's page read a flag per unit (258 ms) on every view (issue 18).
        # The units verification finds (`live("client")`): none of a deleted client.
        units = Vehicle.objects.live("client").filter(client=client)
        total = counting.count(units)
        covered = counting.count(units.filter(covered_today_filter(on)))
    verification = None
    if shows["verification"]:
        verification = _client_verification(
            user=user, client=client, on=on, compliance=shows["compliance"]
        )
    changelist = reverse("admin:vehicles_vehicle_changelist")
    return {
        "on": on,
        "shows": shows,
        "verification": verification,
        "compliance": verification.compliance if verification else None,
        "policies": [
            {
                "number": p.policy_number,
                "type": p.coverage_type.code,
                "type_name": p.coverage_type.name,
                "insurer": p.insurer.name if p.insurer_id else "—",
                "term": f"{_us_date(p.effective_date)} to {_us_date(p.expiration_date)}",
                "url": admin_url(p),
            }
            for p in in_force
        ],
        "covered": covered,
        "not_covered": total - covered,
        "covered_url": f"{changelist}?client__id__exact={client.pk}&covered=yes",
        "not_covered_url": f"{changelist}?client__id__exact={client.pk}&covered=no",
        "certificate_url": reverse("admin:clients_client_certificate", args=[client.pk])
        if shows["certificate"]
        else "",
    }


def _client_verification(
    *, user, client, on: dt.date, compliance: bool
) -> ClientVerification | None:
    """Verification's own answer for the client, with (when `compliance`) its compliance under
    the agency's built-in `federal-minimum` profile (contract section 15), resolved as the API
    resolves `profile=federal-minimum`."""

    profile = requirement_profile_resolve(user=user, ref="federal-minimum") if compliance else None
    results = verify_clients(user=user, on=on, client_id=client.pk, profile=profile)
    return results[0] if results else None
