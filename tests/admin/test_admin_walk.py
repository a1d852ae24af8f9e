"""Every admin URL, walked as staff of another agency: nothing is shown, nothing is changed.

The walk is generated from the URL configuration and the admin registry, so a new admin
view or a newly registered model fails here until it says how it is covered: a scoped
model needs a rival record in `rival_records`, a shared one (master data, superuser-only
tools) a line in SHARED_MODELS, a custom view a line in OBJECT_VIEWS.
"""

from __future__ import annotations

import hashlib
import re

import pytest
from django.contrib import admin
from django.contrib.contenttypes.models import ContentType
from django.core.files.base import ContentFile
from django.db import connection
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from apps.agencies.models import AgencyMembership
from apps.compliance.models import RequirementProfile
from apps.core.models import AgencyScopedQuerySet
from apps.coverages.models import DriverCoverage
from apps.documents.models import Module
from apps.documents.services import document_upload
from apps.masterdata.models import CoverageType
from apps.reports.services import premium_report_create
from tests.conftest import staff_member
from tests.factories import (
    ClientFactory,
    DriverFactory,
    LienholderFactory,
    PolicyFactory,
    ProducerFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db

# Registered models that are not agency data: shared reference tables, or tools that only
# superusers (or staff given an explicit permission no agency group holds) can open.
SHARED_MODELS = {
    "auth.Group",
    "auth.User",
    "core.IdempotencyRecord",
    "accounts.ApiKey",
    "django_tasks_database.DBTaskResult",
    "masterdata.State",
    "masterdata.City",
    "masterdata.UnitType",
    "masterdata.CoverageType",
    "masterdata.Insurer",
    "masterdata.Make",
    "masterdata.DriverType",
    "masterdata.LicenseType",
    "masterdata.ClientType",
}
SITE_VIEWS = {
    "index",
    "login",
    "logout",
    "password_change",
    "password_change_done",
    "jsi18n",
    "app_list",
    "autocomplete",
    "view_on_site",
}
MODEL_VIEWS = {"changelist", "add", "change", "delete", "history", "simple_history"}
# Custom views that take the record's primary key as their only argument.
OBJECT_VIEWS = {
    "documents_document_download",
    "clients_client_certificate",
    "vehicles_vehicle_certificate",
}
# Views on a model's whole list (fleet import and export): walked, and an export must hold
# nothing of another agency.
LIST_VIEWS = {
    f"{model}_{view}"
    for model in ("vehicles_vehicle", "drivers_driver")
    for view in ("import", "process_import", "export")
} | {"documents_document_upload"}  # its own tests: tests/admin/test_document_upload.py
# Custom views of shared models that agency staff may not open at all.
FORBIDDEN_VIEWS = {"auth_user_password_change"}
MARKERS = ["Other Agency", "Rival Transport", "4V4NC9EH5LN223344", "RIVAL-POL-77", "Rival Bank"]


def admin_url_names() -> list[tuple[str, str | None]]:
    found = []

    def walk(patterns, prefix):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("admin/"):
                found.append((route, pattern.name))

    walk(get_resolver().url_patterns, "")
    return found


def model_view_name(model, view: str) -> str:
    return f"{model._meta.app_label}_{model._meta.model_name}_{view}"


@pytest.fixture
def rival_records(other_agency, other_manager):
    """One record of every agency-scoped admin model, all in the other agency."""
    client = ClientFactory(agency=other_agency, client_name="Rival Transport", dot="7654321")
    policy = PolicyFactory(client=client, policy_number="RIVAL-POL-77")
    oa_policy = PolicyFactory(client=client, coverage_type=CoverageType.objects.get(code="OA"))
    vehicle = VehicleFactory(client=client, serial_number="4V4NC9EH5LN223344")
    driver = DriverFactory(client=client, first_name="Rival", last_name="Driver")
    content = b"%PDF-1.4 rival"
    document = document_upload(
        user=other_manager,
        module=Module.CLIENT,
        owner_id=client.id,
        file=ContentFile(content, name="rival.pdf"),
        sha256=hashlib.sha256(content).hexdigest(),
    )
    records = [
        other_agency,
        ProducerFactory(agency=other_agency, name="Rival Producer"),
        AgencyMembership.objects.get(user=other_manager, agency=other_agency),
        client,
        policy,
        vehicle,
        driver,
        LienholderFactory(agency=other_agency, name="Rival Bank"),
        VehicleCoverageFactory(vehicle=vehicle, policy=policy),
        DriverCoverage.objects.create(
            driver=driver,
            policy=oa_policy,
            coverage_status=7,
            policy_added_date=oa_policy.effective_date,
        ),
        document,
        premium_report_create(user=None, policy=policy),
        # every agency has its built-in profile (contract section 15)
        RequirementProfile.objects.get(agency=other_agency, code="federal-minimum"),
        *_event_records(other_agency),
    ]
    for record in list(records):  # give each audited record a second version
        if hasattr(type(record), "history"):
            record.save()
    return {type(r)._meta.label: r for r in records}


def _event_records(agency) -> list:
    """An event, a webhook subscription and one delivery of the other agency (issue 15)."""
    from apps.events.models import Event
    from apps.webhooks.models import Webhook, WebhookDelivery

    webhook = Webhook.objects.create(agency=agency, url="https://93.184.216.34/h", secret="x")
    event = Event.objects.filter(agency=agency).latest("id")
    return [event, webhook, WebhookDelivery.objects.create(webhook=webhook, event=event)]


def snapshot(records) -> dict:
    """Every field of every rival record, with its history length, and every table's size."""
    state = {}
    for label, record in records.items():
        model = type(record)
        state[label] = list(model._default_manager.filter(pk=record.pk).values())
        if hasattr(model, "history"):
            state[label + ".history"] = model.history.filter(id=record.pk).count()
    for model in admin.site._registry:
        state[model._meta.label + ".count"] = model._default_manager.count()
    return state


def test_every_admin_view_and_model_is_covered():
    """A new admin view or model must be added to this walk before it can ship."""
    registry = {model_view_name(m, v) for m in admin.site._registry for v in MODEL_VIEWS}
    uncovered = [
        (route, name)
        for route, name in admin_url_names()
        if name is not None
        and name not in SITE_VIEWS | OBJECT_VIEWS | FORBIDDEN_VIEWS | LIST_VIEWS
        and name not in registry
    ]
    assert uncovered == []
    for model in admin.site._registry:
        scoped = isinstance(model._default_manager.all(), AgencyScopedQuerySet)
        assert scoped or model._meta.label in SHARED_MODELS, model._meta.label


def object_urls(model, record) -> list[str]:
    """Every admin URL that names this record."""
    pk = record.pk
    urls = [
        reverse(f"admin:{model_view_name(model, 'change')}", args=[pk]),
        reverse(f"admin:{model_view_name(model, 'delete')}", args=[pk]),
        reverse(f"admin:{model_view_name(model, 'history')}", args=[pk]),
    ]
    if hasattr(model, "history"):
        for version in model.history.filter(id=pk):
            name = f"admin:{model_view_name(model, 'simple_history')}"
            urls.append(reverse(name, args=[pk, version.history_id]))
    for name in OBJECT_VIEWS:
        if name.startswith(model_view_name(model, "")):
            urls.append(reverse(f"admin:{name}", args=[pk]))
    content_type = ContentType.objects.get_for_model(model).pk
    urls.append(reverse("admin:view_on_site", args=[content_type, pk]))
    return urls


def assert_hidden(response, url):
    assert response.status_code in (302, 403, 404), (url, response.status_code)
    if response.status_code == 302:
        assert not re.search(r"/\d+/(change|history|delete)/", response["Location"]), url
    body = response.content.decode(errors="replace")
    for marker in MARKERS:
        assert marker not in body, (url, marker)


@pytest.mark.parametrize("with_agency", [True, False], ids=["other-agency", "no-agency"])
def test_staff_of_another_agency_sees_and_changes_nothing(
    client, groups, agency, rival_records, with_agency
):
    staff = staff_member([agency] if with_agency else [], groups, "walker")
    client.force_login(staff)
    before = snapshot(rival_records)
    scoped = [m for m in admin.site._registry if m._meta.label not in SHARED_MODELS]
    missing = [m._meta.label for m in scoped if m._meta.label not in rival_records]
    assert missing == [], "add a rival record for these models to rival_records"

    for model in scoped:
        record = rival_records[model._meta.label]
        changelist = reverse(f"admin:{model_view_name(model, 'changelist')}")
        for url in (changelist, reverse(f"admin:{model_view_name(model, 'add')}")):
            response = client.get(url)
            assert response.status_code in (200, 403), (url, response.status_code)
            body = response.content.decode()
            for marker in MARKERS:
                assert marker not in body, (url, marker)
        # Django's bare /<id>/ URL redirects to /<id>/change/ for any id, so follow it once.
        bare = changelist + f"{record.pk}/"
        assert client.get(bare)["Location"] == bare + "change/"
        for url in object_urls(model, record):
            assert_hidden(client.get(url), url)
            data = {"post": "yes", "_change_history": "1", "name": "Hijacked"}
            assert_hidden(client.post(url, data), url)

    for name in LIST_VIEWS:
        url = reverse(f"admin:{name}")
        responses = [client.get(url)]
        if name.endswith("_export"):  # every column ticked: a real CSV of what staff see
            model_admin = next(
                a
                for m, a in admin.site._registry.items()
                if name.startswith(model_view_name(m, ""))
            )
            resource = model_admin.resource_classes[0]
            columns = {
                f"{resource.__name__.lower()}_{c}": "on" for c in resource().get_export_order()
            }
            response = client.post(url, {"format": "0", "resource": "0", **columns})
            assert response["Content-Type"].startswith("text/csv"), url
            responses.append(response)
        for response in responses:
            assert response.status_code in (200, 403, 405), (url, response.status_code)
            for marker in MARKERS:
                assert marker not in response.content.decode(errors="replace"), (url, marker)

    for name in FORBIDDEN_VIEWS:
        url = reverse(f"admin:{name}", args=[staff.pk])
        assert client.get(url).status_code in (302, 403, 404), url

    assert snapshot(rival_records) == before


def test_site_pages_and_autocomplete_show_no_other_agency(client, groups, agency, rival_records):
    client.force_login(staff_member([agency], groups, "walker"))
    for url in ("/admin/", "/admin/clients/", "/admin/agencies/", "/admin/vehicles/"):
        body = client.get(url).content.decode()
        for marker in MARKERS:
            assert marker not in body, (url, marker)
    for model, model_admin in admin.site._registry.items():
        for field_name in model_admin.autocomplete_fields:
            response = client.get(
                "/admin/autocomplete/",
                {
                    "app_label": model._meta.app_label,
                    "model_name": model._meta.model_name,
                    "field_name": field_name,
                    "term": "",
                },
            )
            body = response.content.decode()
            for marker in MARKERS:
                assert marker not in body, (model._meta.label, field_name, marker)


def test_history_version_of_another_agency_is_404_and_cannot_be_saved(
    client, groups, agency, rival_records
):
    """The red team's finding: a POST to another agency's history version moved the client."""
    client.force_login(staff_member([agency], groups, "walker"))
    rival = rival_records["clients.Client"]
    version = rival.history.first().history_id
    url = f"/admin/clients/client/{rival.pk}/history/{version}/"
    assert client.get(url).status_code == 404
    response = client.post(url, {"client_name": "Moved", "agency": agency.pk})
    assert response.status_code == 404
    rival.refresh_from_db()
    assert (rival.client_name, rival.agency_id) == ("Rival Transport", rival.agency_id)


def test_own_history_version_is_shown_read_only(client, groups, agency):
    client.force_login(staff_member([agency], groups, "walker"))
    mine = ClientFactory(agency=agency, client_name="Mine Trucking")
    mine.client_name = "Mine Trucking Renamed"
    mine.save()
    first = mine.history.order_by("history_id").first().history_id
    url = f"/admin/clients/client/{mine.pk}/history/{first}/"
    page = client.get(url)
    assert page.status_code == 200
    assert "Mine Trucking" in page.content.decode()
    assert client.post(url, {"client_name": "Reverted", "agency": agency.pk}).status_code == 403
    mine.refresh_from_db()
    assert mine.client_name == "Mine Trucking Renamed"


@pytest.mark.parametrize(
    "lookup", ["client_name__regex", "client_name__iregex", "agency__name__regex"]
)
def test_regex_lookups_are_refused(client, groups, agency, lookup):
    client.force_login(staff_member([agency], groups, "walker"))
    response = client.get("/admin/clients/client/", {lookup: "^(b+)+$"})
    assert response.status_code == 400


@pytest.mark.parametrize(
    "url",
    [
        "/admin/compliance/requirementprofile/?rules__contains=AL",
        "/admin/webhooks/webhook/?event_types__contains=x",
        "/admin/webhooks/webhook/?client_ids__contains=1",
        "/admin/events/event/?data__contains=x",
    ],
)
def test_lookups_the_database_cannot_run_are_refused(client, groups, agency, url, caplog):
    """SQLite has no `contains` on JSON: the lookup is refused as a regex one is (400, the
    security log naming it), never a server error; a database that runs it filters the list."""
    client.force_login(staff_member([agency], groups, "walker"))
    response = client.get(url)
    if connection.features.supports_json_field_contains:
        assert response.status_code == 200
        return
    lookup = url.split("?")[1].split("=")[0]
    assert response.status_code == 400
    assert [
        r.getMessage()
        for r in caplog.records
        if r.name == "django.security.DisallowedModelAdminLookup"
    ] == [f"Filtering by {lookup} is not allowed."]


def test_plain_lookups_still_filter(client, groups, agency):
    client.force_login(staff_member([agency], groups, "walker"))
    ClientFactory(agency=agency, client_name="Alpha Haulers")
    ClientFactory(agency=agency, client_name="Beta Haulers")
    page = client.get("/admin/clients/client/", {"client_name__startswith": "Alpha"})
    assert page.status_code == 200
    body = page.content.decode()
    assert "Alpha Haulers" in body and "Beta Haulers" not in body


@pytest.mark.parametrize(
    "path",
    [
        "/admin/clients/client/",
        "/admin/vehicles/vehicle/",
        "/admin/drivers/driver/",
        "/admin/agencies/producer/",
        "/admin/agencies/agencymembership/",
        "/admin/vehicles/lienholder/",
    ],
)
def test_agency_filters_offer_only_the_staff_members_agencies(
    client, groups, agency, other_agency, path
):
    client.force_login(staff_member([agency], groups, "walker"))
    body = client.get(path).content.decode()
    assert "Other Agency" not in body
