"""Admin actions write only for staff holding the permission the API asks for the same service.

A staff member with view permissions only is neither offered a write action nor able to run
it by POSTing its name (Django runs only the actions it offers); a manager can. And ids or
filter values in other scripts' digits are bad values, not a server error.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from apps.accounts.models import ApiKey
from apps.accounts.services import api_key_create
from apps.compliance.models import RequirementProfile
from apps.core.dates import today
from apps.coverages.models import VehicleCoverage
from apps.events.services import event_emit
from apps.reports.services import premium_report_create
from apps.webhooks.models import DeliveryStatus, Webhook, WebhookDelivery
from tests.conftest import staff_member
from tests.factories import ClientFactory, PolicyFactory, UserFactory, VehicleFactory

pytestmark = pytest.mark.django_db


def offered(client, changelist: str) -> set[str]:
    form = client.get(changelist).context["action_form"]
    return {name for name, _ in form.fields["action"].choices if name} if form else set()


def act(client, changelist: str, action: str, *pks, **extra):
    return client.post(changelist, {"action": action, "_selected_action": list(pks), **extra})


@pytest.fixture
def viewer_client(client, groups, agency):
    client.force_login(staff_member([agency], groups, "viewer-staff", group=1))
    return client


def test_a_viewer_neither_sees_nor_runs_soft_delete_and_restore(viewer_client, staff, agency):
    live = ClientFactory(agency=agency, dot="1000001")
    gone = ClientFactory(agency=agency, dot="1000002", deleted=True)
    changelist = "/admin/clients/client/"
    assert {"soft_delete", "restore"}.isdisjoint(offered(viewer_client, changelist))
    act(viewer_client, changelist, "soft_delete", live.pk)
    act(viewer_client, f"{changelist}?deleted__exact=1", "restore", gone.pk)
    live.refresh_from_db()
    gone.refresh_from_db()
    assert not live.deleted and gone.deleted
    viewer_client.force_login(staff)  # a manager: offered (running them: test_backoffice)
    assert {"soft_delete", "restore"} <= offered(viewer_client, changelist)


def test_a_viewer_cannot_assign_vehicles_to_a_policy(viewer_client, staff, agency):
    carrier = ClientFactory(agency=agency)
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    changelist = "/admin/vehicles/vehicle/"
    assert "assign_to_policy" not in offered(viewer_client, changelist)
    apply = {"apply": "1", "policy": policy.pk, "policy_added_date": today().isoformat()}
    act(viewer_client, changelist, "assign_to_policy", unit.pk, **apply)
    assert not VehicleCoverage.objects.exists()
    viewer_client.force_login(staff)
    assert "assign_to_policy" in offered(viewer_client, changelist)
    act(viewer_client, changelist, "assign_to_policy", unit.pk, **apply)
    assert VehicleCoverage.objects.filter(vehicle=unit, policy=policy).count() == 1


def test_a_viewer_cannot_freeze_a_report_a_manager_can(viewer_client, staff, agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    report = premium_report_create(user=staff, policy=policy)
    changelist = "/admin/reports/policypremiumreport/"
    assert "freeze_snapshot" not in offered(viewer_client, changelist)
    act(viewer_client, changelist, "freeze_snapshot", report.pk)
    report.refresh_from_db()
    assert report.snapshot_at is None
    viewer_client.force_login(staff)
    assert "freeze_snapshot" in offered(viewer_client, changelist)
    act(viewer_client, changelist, "freeze_snapshot", report.pk)
    report.refresh_from_db()
    assert report.snapshot_at is not None


def _staff_with(agency, username: str, *codenames: str):
    user = UserFactory(username=username, agencies=[agency], is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


def test_viewing_a_webhook_does_not_allow_redelivering_or_rotating(client, agency, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    webhook = Webhook.objects.create(agency=agency, url="http://127.0.0.1/h", secret="whsec_x")
    event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={})
    delivery = WebhookDelivery.objects.get()
    later = timezone.now() + dt.timedelta(days=1)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.FAILED, next_attempt_at=later
    )
    client.force_login(_staff_with(agency, "hook-viewer", "view_webhook", "view_client"))
    deliveries, hooks = "/admin/webhooks/webhookdelivery/", "/admin/webhooks/webhook/"
    assert "redeliver" not in offered(client, deliveries)
    assert "rotate_secret" not in offered(client, hooks)
    act(client, deliveries, "redeliver", delivery.pk)
    act(client, hooks, "rotate_secret", webhook.pk)
    delivery.refresh_from_db()
    webhook.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED and webhook.secret == "whsec_x"
    client.force_login(
        _staff_with(agency, "hook-manager", "view_webhook", "change_webhook", "view_client")
    )
    assert "redeliver" in offered(client, deliveries)
    act(client, deliveries, "redeliver", delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING


def test_viewing_api_keys_does_not_allow_revoking_them(client, agency):
    key, _ = api_key_create(name="partner")
    client.force_login(_staff_with(agency, "key-viewer", "view_apikey"))
    changelist = "/admin/accounts/apikey/"
    assert "revoke" not in offered(client, changelist)
    act(client, changelist, "revoke", key.pk)
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None
    client.force_login(_staff_with(agency, "key-keeper", "view_apikey", "change_apikey"))
    act(client, changelist, "revoke", key.pk)
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None


def test_digits_of_other_scripts_are_bad_values_not_500s(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    for path in ("/admin/coverages/vehiclecoverage/", "/admin/coverages/drivercoverage/"):
        assert staff_client.get(path, {"coverage_status": "²"}).status_code == 200
        assert staff_client.get(path, {"coverage_status": "4"}).status_code == 200
    assert staff_client.get("/admin/clients/client/²/history/").status_code == 404
    assert staff_client.get("/admin/clients/client/\u0661/history/").status_code == 404
    assert staff_client.get(f"/admin/clients/client/{carrier.pk}/history/").status_code == 200


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


NOTHING_DONE = "Nothing was done: none of the selected records is one you can see."


def _invisible(action: str, rival):
    """A record of another agency for `action`, and what says it was left alone."""
    if action == "freeze_snapshot":
        report = premium_report_create(user=None, policy=PolicyFactory(client=rival))
        return report.pk, lambda: type(report).objects.get(pk=report.pk).snapshot_at is None
    if action in ("assign_to_policy", "download_vehicle_certificates"):
        vehicle = VehicleFactory(client=rival)
        return vehicle.pk, lambda: not VehicleCoverage.objects.filter(vehicle=vehicle).exists()
    if action in ("rotate_secret", "redeliver"):
        webhook = Webhook.objects.create(
            agency=rival.agency, url="https://93.184.216.34/h", secret="whsec_x"
        )
        if action == "rotate_secret":
            return webhook.pk, lambda: Webhook.objects.get(pk=webhook.pk).secret == "whsec_x"
        event = event_emit(
            type="client.updated", agency_id=rival.agency_id, client_id=None, data={}
        )
        delivery = WebhookDelivery.objects.get(event=event)
        WebhookDelivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.FAILED)
        return (
            delivery.pk,
            lambda: WebhookDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.FAILED,
        )
    if action == "delete_selected":
        profile = RequirementProfile.objects.get(agency=rival.agency, built_in=False)
        return profile.pk, lambda: RequirementProfile.objects.filter(pk=profile.pk).exists()
    return rival.pk, lambda: not type(rival).objects.get(pk=rival.pk).deleted


@pytest.mark.parametrize(
    ("changelist", "action"),
    [
        ("/admin/reports/policypremiumreport/", "freeze_snapshot"),
        ("/admin/clients/client/", "soft_delete"),
        ("/admin/clients/client/", "download_client_certificates"),
        ("/admin/vehicles/vehicle/", "assign_to_policy"),
        ("/admin/vehicles/vehicle/", "download_vehicle_certificates"),
        ("/admin/webhooks/webhook/", "rotate_secret"),
        ("/admin/webhooks/webhookdelivery/", "redeliver"),
        ("/admin/compliance/requirementprofile/", "delete_selected"),
    ],
)
def test_an_action_on_records_the_staff_member_cannot_see_says_nothing_was_done(
    staff_client, agency, other_agency, changelist, action
):
    rival = ClientFactory(agency=other_agency)
    RequirementProfile.objects.create(
        agency=other_agency, name="Theirs", code="theirs", rules=[{"kind": "federal_minimum"}]
    )
    pk, left_alone = _invisible(action, rival)
    response = act(staff_client, changelist, action, pk, 999999, "abc")
    assert response.status_code == 302, response
    assert _messages(staff_client.get(changelist)) == [NOTHING_DONE]
    assert left_alone()


def test_assigning_only_invisible_units_shows_no_assign_page(staff_client, agency, other_agency):
    """The second step (the policy chosen) of a selection of no visible unit: nothing done."""
    mine = PolicyFactory(client=ClientFactory(agency=agency))
    theirs = VehicleFactory(client=ClientFactory(agency=other_agency))
    changelist = "/admin/vehicles/vehicle/"
    response = act(
        staff_client, changelist, "assign_to_policy", theirs.pk, apply="1", policy=mine.pk
    )
    assert response.status_code == 302
    assert _messages(staff_client.get(changelist)) == [NOTHING_DONE]
    assert not VehicleCoverage.objects.filter(vehicle=theirs).exists()


def test_rotating_a_secret_says_how_many_and_shows_it_once(staff_client, agency):
    webhook = Webhook.objects.create(agency=agency, url="https://93.184.216.34/h", secret="whsec_x")
    changelist = "/admin/webhooks/webhook/"
    response = act(staff_client, changelist, "rotate_secret", webhook.pk)
    webhook.refresh_from_db()
    assert webhook.secret != "whsec_x"
    page = staff_client.get(response["Location"] if response.status_code == 302 else changelist)
    assert _messages(page) == [
        f"New secret (shown once) of https://93.184.216.34/h: {webhook.secret}",
        "Rotated the secret of 1 record(s).",
    ]
    assert "Https://" not in page.content.decode()  # the URL as written, never capitalised


def test_freezing_reports_says_how_many(staff_client, agency):
    report = premium_report_create(
        user=None, policy=PolicyFactory(client=ClientFactory(agency=agency))
    )
    changelist = "/admin/reports/policypremiumreport/"
    act(staff_client, changelist, "freeze_snapshot", report.pk)
    assert _messages(staff_client.get(changelist)) == ["Froze 1 record(s)."]
