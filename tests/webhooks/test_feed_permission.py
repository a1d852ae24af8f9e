"""A webhook subscription pushes the change feed's events: every webhook endpoint, and the
back-office's subscription and delivery pages, need the feed's permission beside their own."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from apps.events.services import event_emit
from apps.webhooks.models import Webhook, WebhookDelivery
from tests.conftest import assert_problem
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

WEBHOOK_PERMISSIONS = ("view_webhook", "add_webhook", "change_webhook", "delete_webhook")


@pytest.fixture(autouse=True)
def private_ok(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True


def _member(agency, *codenames, staff=False, username="hooks-only"):
    user = UserFactory(username=username, agencies=[agency], is_staff=staff)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


@pytest.fixture
def hook(agency):
    return Webhook.objects.create(agency=agency, url="http://127.0.0.1/mine", secret="whsec_x")


@pytest.fixture
def delivery(hook, agency):
    event_emit(type="client.updated", agency_id=agency.id, client_id=None, data={"n": 1})
    return WebhookDelivery.objects.get(webhook=hook)


def _calls(hook, delivery):
    base = f"/v1/webhooks/{hook.pk}"
    return [
        ("get", "/v1/webhooks", None),
        ("post", "/v1/webhooks", {"url": "http://127.0.0.1/new"}),
        ("get", base, None),
        ("put", base, {"description": "changed"}),
        ("post", f"{base}/rotate-secret", None),
        ("post", f"{base}/ping", None),
        ("get", f"{base}/deliveries", None),
        ("post", f"{base}/deliveries/{delivery.pk}/redeliver", None),
        ("delete", base, None),
    ]


def test_without_the_feed_permission_every_webhook_endpoint_is_403(
    make_api, agency, hook, delivery
):
    api = make_api(_member(agency, *WEBHOOK_PERMISSIONS))
    assert_problem(api.get("/v1/events"), 403)  # the feed refuses them
    for method, path, body in _calls(hook, delivery):
        response = getattr(api, method)(path, body, format="json")
        assert_problem(response, 403)
    hook.refresh_from_db()
    assert (hook.description, hook.secret) == ("", "whsec_x")
    assert Webhook.objects.count() == 1
    # A method the route does not offer is still a 405, whatever the permissions.
    response = api.patch(f"/v1/webhooks/{hook.pk}", {}, format="json")
    assert_problem(response, 405)


def test_with_the_feed_permission_every_webhook_endpoint_answers(make_api, agency, hook, delivery):
    api = make_api(_member(agency, *WEBHOOK_PERMISSIONS, "view_client"))
    statuses = [
        getattr(api, method)(path, body, format="json").status_code
        for method, path, body in _calls(hook, delivery)
    ]
    assert statuses == [200, 201, 200, 200, 200, 202, 200, 202, 204]


def test_the_back_office_pages_need_the_feed_permission(client, agency, hook, delivery):
    pages = [
        "/admin/webhooks/webhook/",
        f"/admin/webhooks/webhook/{hook.pk}/change/",
        "/admin/webhooks/webhook/add/",
        "/admin/webhooks/webhookdelivery/",
        f"/admin/webhooks/webhookdelivery/{delivery.pk}/change/",
    ]
    without = _member(agency, *WEBHOOK_PERMISSIONS, staff=True)
    client.force_login(without)
    assert [client.get(page).status_code for page in pages] == [403] * 5
    index = client.get("/admin/").content.decode()
    assert "/admin/webhooks/" not in index
    rotated = client.post(
        "/admin/webhooks/webhook/",
        {"action": "rotate_secret", "_selected_action": [hook.pk]},
    )
    assert rotated.status_code == 403
    hook.refresh_from_db()
    assert hook.secret == "whsec_x"

    with_feed = _member(
        agency, *WEBHOOK_PERMISSIONS, "view_client", staff=True, username="hooks-and-feed"
    )
    client.force_login(with_feed)
    assert [client.get(page).status_code for page in pages] == [200] * 5
    assert "/admin/webhooks/" in client.get("/admin/").content.decode()
