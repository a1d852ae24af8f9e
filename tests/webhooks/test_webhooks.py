"""Webhook subscriptions and delivery (contract section 14), over HTTP with real headers; a
local receiver verifies each request with the standardwebhooks library, as a customer would."""

from __future__ import annotations

import base64
import datetime as dt
import socket

import pytest
from django.utils import timezone

from apps.events.models import Event
from apps.webhooks.delivery import FIRST_RETRY_SECONDS, deliveries_sweep, delivery_attempt
from apps.webhooks.models import Webhook, WebhookDelivery
from tests.conftest import assert_problem
from tests.factories import PolicyFactory, UserFactory, VehicleFactory
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def private_ok(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True


def subscribe(api, url, **extra):
    response = api.post("/v1/webhooks", {"url": url, **extra}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def run_due() -> list[str | None]:
    """What the worker does: attempt every due pending delivery."""
    now = timezone.now()
    due = WebhookDelivery.objects.filter(status="pending", next_attempt_at__lte=now)
    return [delivery_attempt(delivery_id=pk) for pk in due.values_list("pk", flat=True)]


def test_create_shows_secret_once(api, private_ok):
    body = subscribe(api, "http://127.0.0.1:9/hook", eventTypes=["policy.created"])
    assert body["secret"].startswith("whsec_")
    assert len(base64.b64decode(body["secret"][6:])) >= 24
    assert set(body) >= {
        "id",
        "url",
        "eventTypes",
        "clientIds",
        "profileId",
        "description",
        "active",
        "createdAt",
        "secret",
    }
    detail = api.get(f"/v1/webhooks/{body['id']}").json()
    assert "secret" not in detail and detail["eventTypes"] == ["policy.created"]
    listed = api.get("/v1/webhooks").json()
    assert listed["count"] == 1 and "secret" not in listed["results"][0]
    updated = api.put(f"/v1/webhooks/{body['id']}", {"description": "ops"}, format="json")
    assert updated.status_code == 200 and "secret" not in updated.json()
    assert updated.json()["description"] == "ops"


def test_delivery_is_signed_and_verified_by_the_receiver(api, carrier, private_ok):
    with Receiver() as receiver:
        hook = subscribe(api, receiver.url)
        receiver.secret = hook["secret"]
        response = api.put(f"/v1/clients/{carrier.id}", {"clientName": "Signed"}, format="json")
        assert response.status_code == 200
        assert run_due() == ["delivered"]
    assert receiver.rejected == []
    (payload,) = receiver.received
    event = Event.objects.get(type="client.updated")
    assert payload["id"] == event.public_id == receiver.headers[0]["webhook-id"]
    assert payload["type"] == "client.updated" and payload["data"]["clientName"] == "Signed"
    # One shape for both (apps/events/serializers.py): the body is the feed's item.
    assert api.get("/v1/events", {"type": "client.updated"}).json()["results"] == [payload]
    log = api.get(f"/v1/webhooks/{hook['id']}/deliveries").json()
    (row,) = log["results"]
    assert row["eventId"] == event.public_id and row["eventType"] == "client.updated"
    assert row["status"] == "delivered" and row["attempts"] == 1
    assert row["responseStatus"] == 204 and row["durationMs"] is not None


def test_rotation_signs_with_both_secrets(api, carrier, private_ok):
    with Receiver() as receiver:
        hook = subscribe(api, receiver.url)
        old = hook["secret"]
        rotated = api.post(f"/v1/webhooks/{hook['id']}/rotate-secret")
        assert rotated.status_code == 200
        new = rotated.json()["secret"]
        assert new != old and new.startswith("whsec_")
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
        receiver.secret = old  # a receiver not yet switched still verifies
        run_due()
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "B"}, format="json")
        receiver.secret = new  # and one already switched too
        run_due()
    assert receiver.rejected == [] and len(receiver.received) == 2
    assert len(receiver.headers[0]["webhook-signature"].split(" ")) == 2


def test_a_second_rotation_keeps_the_secret_it_replaces_and_ends_the_older_overlap(
    api, carrier, private_ok
):
    """Two secrets sign at most (docs/webhooks.md): after rotating twice, the first secret (a
    leaked one, say) no longer verifies; the one the second rotation replaced still does."""
    with Receiver() as receiver:
        hook = subscribe(api, receiver.url)
        first = hook["secret"]
        second = api.post(f"/v1/webhooks/{hook['id']}/rotate-secret").json()["secret"]
        third = api.post(f"/v1/webhooks/{hook['id']}/rotate-secret").json()["secret"]
        assert len({first, second, third}) == 3
        for secret, name in ((second, "B"), (third, "C"), (first, "A")):
            receiver.secret = secret
            api.put(f"/v1/clients/{carrier.id}", {"clientName": name}, format="json")
            run_due()
    assert [p["data"]["clientName"] for p in receiver.received] == ["B", "C"]
    assert len(receiver.rejected) == 1
    assert all(len(h["webhook-signature"].split(" ")) == 2 for h in receiver.headers)


def test_wrong_secret_fails_verification(api, carrier, private_ok):
    with Receiver(secret="whsec_" + base64.b64encode(b"x" * 32).decode()) as receiver:
        subscribe(api, receiver.url)
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
        assert run_due() == ["retry"]
    assert receiver.received == [] and len(receiver.rejected) == 1


def test_retry_backoff_then_delivered(api, carrier, private_ok):
    with Receiver(answer=500) as receiver:
        hook = subscribe(api, receiver.url)
        receiver.secret = hook["secret"]
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
        started = timezone.now()
        assert run_due() == ["retry"]
        finished = timezone.now()
        delivery = WebhookDelivery.objects.get()
        # 10 s with +-50 % jitter, counted from the end of the failed attempt (which may itself
        # take a while on a loaded machine: measuring from its start failed at 15.05 s).
        earliest = started + dt.timedelta(seconds=FIRST_RETRY_SECONDS * 0.5)
        latest = finished + dt.timedelta(seconds=FIRST_RETRY_SECONDS * 1.5)
        assert earliest <= delivery.next_attempt_at <= latest
        assert run_due() == []  # not yet due
        WebhookDelivery.objects.update(next_attempt_at=timezone.now())
        receiver.answer = 200
        assert run_due() == ["delivered"]
    delivery.refresh_from_db()
    assert delivery.attempts == 2 and delivery.status == "delivered"
    assert receiver.unique_ids() == [receiver.received[0]["id"]]  # same webhook-id both times


def test_gives_up_after_72_hours(api, carrier, private_ok):
    with Receiver(answer=503) as receiver:
        subscribe(api, receiver.url)
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
        WebhookDelivery.objects.update(created_at=timezone.now() - dt.timedelta(hours=71))
        assert run_due() == ["retry"]
        WebhookDelivery.objects.update(
            created_at=timezone.now() - dt.timedelta(hours=73), next_attempt_at=timezone.now()
        )
        assert run_due() == ["failed"]


def test_410_deactivates(api, carrier, private_ok):
    with Receiver(answer=410) as receiver:
        hook = subscribe(api, receiver.url)
        receiver.secret = hook["secret"]
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
        assert run_due() == ["failed"]
    assert api.get(f"/v1/webhooks/{hook['id']}").json()["active"] is False
    api.put(f"/v1/clients/{carrier.id}", {"clientName": "B"}, format="json")
    assert WebhookDelivery.objects.count() == 1  # an inactive subscription gets nothing


def test_refused_connection_is_retried(api, carrier, private_ok):
    subscribe(api, "http://127.0.0.1:9/closed")
    api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
    assert run_due() == ["retry"]
    assert WebhookDelivery.objects.get().error


def test_filters_by_type_and_client(api, carrier, agency, private_ok):
    from tests.factories import ClientFactory

    second = ClientFactory(agency=agency)
    subscribe(api, "http://127.0.0.1:9/a", eventTypes=["policy.created"])
    subscribe(api, "http://127.0.0.1:9/b", clientIds=[second.id])
    api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
    assert WebhookDelivery.objects.count() == 0
    api.put(f"/v1/clients/{second.id}", {"clientName": "B"}, format="json")
    assert list(WebhookDelivery.objects.values_list("webhook__url", flat=True)) == [
        "http://127.0.0.1:9/b"
    ]


def test_ping_and_redeliver_answer_202(api, private_ok):
    with Receiver() as receiver:
        hook = subscribe(api, receiver.url)
        receiver.secret = hook["secret"]
        ping = api.post(f"/v1/webhooks/{hook['id']}/ping")
        assert ping.status_code == 202 and ping.json()["eventType"] == "webhook.ping"
        assert run_due() == ["delivered"]
        again = api.post(f"/v1/webhooks/{hook['id']}/deliveries/{ping.json()['id']}/redeliver")
        assert again.status_code == 202 and again.json()["status"] == "pending"
        assert run_due() == ["delivered"]
    assert [p["type"] for p in receiver.received] == ["webhook.ping", "webhook.ping"]
    assert len(receiver.unique_ids()) == 1


def test_the_delivery_log_sorts(api, private_ok):
    hook = subscribe(api, "http://127.0.0.1:9/x")
    pings = [api.post(f"/v1/webhooks/{hook['id']}/ping").json()["id"] for _ in range(3)]
    WebhookDelivery.objects.filter(pk=pings[1]).update(attempts=5)
    path = f"/v1/webhooks/{hook['id']}/deliveries"

    def ids(**params):
        response = api.get(path, params)
        assert response.status_code == 200, response.content
        return [d["id"] for d in response.json()["results"]]

    assert ids() == pings[::-1]  # newest first
    assert ids(sort="id") == pings
    assert ids(sort="-attempts,id") == [pings[1], pings[0], pings[2]]
    for bad in ("url", "nope"):  # a subscription's field is no delivery's
        assert_problem(api.get(path, {"sort": bad}), 400)


def test_ssrf_guard(api):
    for url in (
        "http://127.0.0.1/hook",
        "http://10.0.0.5/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://localhost:8000/hook",
        "http://224.0.0.1/hook",
        "ftp://93.184.216.34/hook",
        # Shared address space (carrier NAT; a cloud's metadata service at 100.100.100.200)
        # and IPv6 addresses that wrap a private one: 6to4 of 127.0.0.1, NAT64 of 169.254.169.254.
        "http://100.64.0.1/hook",
        "http://100.100.100.200/latest/meta-data",
        "http://[2002:7f00:1::]/hook",
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",
    ):
        refused = assert_problem(api.post("/v1/webhooks", {"url": url}, format="json"), 400)
        assert "url" in str(refused), (url, refused)
    assert (
        api.post("/v1/webhooks", {"url": "https://93.184.216.34/h"}, format="json").status_code
        == 201
    )


def test_a_port_out_of_range_is_a_400_on_the_url(api, private_ok):
    hook = subscribe(api, "http://127.0.0.1:9/x")
    for url in ("http://93.184.216.34:99999/x", "http://127.0.0.1:70000/x", "http://127.0.0.1:0/x"):
        for refused in (
            api.post("/v1/webhooks", {"url": url}, format="json"),
            api.put(f"/v1/webhooks/{hook['id']}", {"url": url}, format="json"),
        ):
            body = assert_problem(refused, 400)
            assert "port must be a number from 1 to 65535" in str(body), body
    assert Webhook.objects.get(pk=hook["id"]).url == "http://127.0.0.1:9/x"
    assert Webhook.objects.count() == 1


def test_credentials_in_the_url_are_a_400_on_the_url(api, private_ok):
    # They would be shown back in every GET and never sent: the signature authenticates.
    hook = subscribe(api, "http://127.0.0.1:9/x")
    for url in ("http://user:pw@127.0.0.1:9/x", "https://user@93.184.216.34/x"):
        for refused in (
            api.post("/v1/webhooks", {"url": url}, format="json"),
            api.put(f"/v1/webhooks/{hook['id']}", {"url": url}, format="json"),
        ):
            body = assert_problem(refused, 400)
            assert [(e["field"], e["message"]) for e in body["errors"]] == [
                ("url", "The URL must not contain credentials (user:password@).")
            ], body
    assert Webhook.objects.get(pk=hook["id"]).url == "http://127.0.0.1:9/x"
    assert Webhook.objects.count() == 1


def test_an_update_checks_only_the_fields_it_sends(
    api, make_api, groups, agency, other_agency, carrier, private_ok, settings
):
    # What the subscription names may have changed since it was written: its client moved to
    # another agency, its profile was deleted (before profiles in use were kept), its host no
    # longer resolves. It can still be paused, renamed and re-activated.
    both = make_api(
        UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    )
    hook = subscribe(api, "http://127.0.0.1:9/x", clientIds=[carrier.id])
    moved = both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json")
    assert moved.status_code == 200, moved.content
    Webhook.objects.filter(pk=hook["id"]).update(
        profile_id=999_999, url="http://hooks.gone.invalid/x"
    )

    for change in ({"description": "Renamed"}, {"active": False}, {"active": True}):
        answer = api.put(f"/v1/webhooks/{hook['id']}", change, format="json")
        assert answer.status_code == 200, answer.content
    assert api.get(f"/v1/webhooks/{hook['id']}").json()["description"] == "Renamed"
    # The whole subscription sent back as it was read is no change: accepted.
    whole = {k: v for k, v in api.get(f"/v1/webhooks/{hook['id']}").json().items() if k != "id"}
    assert api.put(f"/v1/webhooks/{hook['id']}", whole, format="json").status_code == 200
    # What changes is checked, as on creation.
    for change, field in (
        ({"clientIds": [carrier.id, 0]}, "clientIds"),
        ({"profileId": 999_998}, "profileId"),
        ({"url": "http://hooks.gone.invalid/y"}, "url"),
    ):
        assert field in str(
            assert_problem(api.put(f"/v1/webhooks/{hook['id']}", change, format="json"), 400)
        )


def test_private_target_not_called_at_delivery(api, carrier, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    with Receiver() as receiver:
        subscribe(api, receiver.url)
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
        assert run_due() == ["retry"]
    assert receiver.headers == []
    assert "private" in WebhookDelivery.objects.get().error


def test_connection_goes_to_the_checked_address_with_the_name_as_host(
    api, carrier, private_ok, monkeypatch
):
    """The host is resolved once, for the SSRF check, and the connection goes to that
    address: a second resolution (DNS rebinding) would fail here, and the name is sent as
    Host."""
    real = socket.getaddrinfo
    answers = {"left": 2}  # at creation, then the check at delivery; never a third time

    def fake(host, *args, **kwargs):
        if host == "hooks.customer.test":
            if answers["left"] <= 0:
                raise socket.gaierror("resolved again")
            answers["left"] -= 1
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    with Receiver() as receiver:
        port = receiver.server.server_address[1]
        hook = subscribe(api, f"http://hooks.customer.test:{port}{receiver.path}?via=dns")
        receiver.secret = hook["secret"]
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "Pinned"}, format="json")
        assert run_due() == ["delivered"]
    assert answers["left"] == 0
    assert receiver.headers[0]["host"] == f"hooks.customer.test:{port}"
    assert receiver.paths == [f"{receiver.path}?via=dns"]


def test_errors_and_permissions(api, viewer_api, other_api, make_api, private_ok, rival):
    hook = subscribe(api, "http://127.0.0.1:9/x")
    assert_problem(api.post("/v1/webhooks", {}, format="json"), 400)
    assert_problem(api.post("/v1/webhooks", {"url": "not a url"}, format="json"), 400)
    assert_problem(
        api.post(
            "/v1/webhooks", {"url": "http://127.0.0.1/", "eventTypes": ["x.y"]}, format="json"
        ),
        400,
    )
    assert_problem(
        api.post(
            "/v1/webhooks", {"url": "http://127.0.0.1/", "clientIds": [rival.id]}, format="json"
        ),
        400,
    )
    assert_problem(
        api.post(
            "/v1/webhooks", {"url": "http://127.0.0.1/", "agencyId": rival.agency_id}, format="json"
        ),
        403,
    )
    assert_problem(make_api().get("/v1/webhooks"), 401)
    assert_problem(viewer_api.get("/v1/webhooks"), 403)
    assert_problem(
        viewer_api.post("/v1/webhooks", {"url": "http://127.0.0.1/"}, format="json"), 403
    )
    # Another agency's subscription does not exist for this caller.
    assert_problem(other_api.get(f"/v1/webhooks/{hook['id']}"), 404)
    assert_problem(
        other_api.put(f"/v1/webhooks/{hook['id']}", {"active": False}, format="json"), 404
    )
    assert_problem(other_api.delete(f"/v1/webhooks/{hook['id']}"), 404)
    assert_problem(other_api.post(f"/v1/webhooks/{hook['id']}/ping"), 404)
    assert_problem(other_api.post(f"/v1/webhooks/{hook['id']}/rotate-secret"), 404)
    assert_problem(other_api.get(f"/v1/webhooks/{hook['id']}/deliveries"), 404)
    assert other_api.get("/v1/webhooks").json()["count"] == 0
    assert_problem(api.post(f"/v1/webhooks/{hook['id']}/deliveries/999999/redeliver"), 404)
    assert api.delete(f"/v1/webhooks/{hook['id']}").status_code == 204
    assert_problem(api.get(f"/v1/webhooks/{hook['id']}"), 404)


def test_an_update_naming_an_agency_not_served_is_403(api, other_agency, private_ok):
    # Contract section 4: existing or not, as the create and a client's update answer.
    hook = subscribe(api, "http://127.0.0.1:9/a")
    for agency_id in (other_agency.id, 999):
        body = {"agencyId": agency_id, "description": "moved"}
        assert_problem(api.put(f"/v1/webhooks/{hook['id']}", body, format="json"), 403)
    assert api.get(f"/v1/webhooks/{hook['id']}").json()["description"] == hook["description"]


def test_an_update_naming_another_served_agency_is_400(
    make_api, groups, agency, other_agency, private_ok
):
    both = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    api = make_api(both)
    hook = subscribe(api, "http://127.0.0.1:9/a", agencyId=agency.id)
    body = {"agencyId": other_agency.id}
    problem = assert_problem(api.put(f"/v1/webhooks/{hook['id']}", body, format="json"), 400)
    assert [e["field"] for e in problem["errors"]] == ["agencyId"]


def test_several_agencies_must_name_one(make_api, groups, agency, other_agency, private_ok):
    both = UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    api = make_api(both)
    assert_problem(api.post("/v1/webhooks", {"url": "http://127.0.0.1/"}, format="json"), 400)
    made = subscribe(api, "http://127.0.0.1/", agencyId=other_agency.id)
    assert Webhook.objects.get(pk=made["id"]).agency_id == other_agency.id


def test_other_agencys_events_never_reach_a_subscription(api, other_api, rival, private_ok):
    subscribe(api, "http://127.0.0.1:9/x")
    other_api.put(f"/v1/clients/{rival.id}", {"clientName": "Theirs"}, format="json")
    assert WebhookDelivery.objects.count() == 0


def test_sweep_picks_up_what_a_killed_worker_left(api, carrier, private_ok):
    """A worker killed mid-delivery leaves the row pending and held; once the lease lapses
    the sweep queues it again, and the next attempt delivers it."""
    with Receiver() as receiver:
        hook = subscribe(api, receiver.url)
        receiver.secret = hook["secret"]
        api.put(f"/v1/clients/{carrier.id}", {"clientName": "A"}, format="json")
        past = timezone.now() - dt.timedelta(minutes=5)
        # As a killed attempt leaves it: claimed (attempt counted), never finished.
        WebhookDelivery.objects.update(
            attempts=1, locked_until=timezone.now() + dt.timedelta(seconds=30), next_attempt_at=past
        )
        assert deliveries_sweep() == 0  # still held
        WebhookDelivery.objects.update(locked_until=past)
        assert deliveries_sweep() == 1
        assert run_due() == ["delivered"]
    assert len(receiver.received) == 1


def test_scheduling_a_vehicle_notifies(api, carrier, private_ok):
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    with Receiver() as receiver:
        hook = subscribe(api, receiver.url, eventTypes=["vehicle.status_changed"])
        receiver.secret = hook["secret"]
        api.post(
            "/v1/vehicles/coverages",
            {
                "vehicleId": unit.id,
                "policyId": policy.id,
                "policyAddedDate": str(policy.effective_date),
            },
            format="json",
        )
        assert run_due() == ["delivered"]
    (payload,) = receiver.received
    assert payload["data"]["vehicleId"] == unit.id and payload["data"]["to"] == "ACTIVE"


def test_calendar_events_reach_subscriptions(api, carrier, private_ok):
    """The daily job's events fan out like any other (in bulk: one insert of deliveries)."""
    from apps.core.dates import today
    from apps.coverages.calendar import calendar_run

    day = today()
    policy = PolicyFactory(
        client=carrier, effective_date=day, expiration_date=day.replace(year=day.year + 1)
    )
    with Receiver() as receiver:
        hook = subscribe(
            api, receiver.url, eventTypes=["policy.effective", "carrier.status_changed"]
        )
        receiver.secret = hook["secret"]
        assert calendar_run(day=day) >= 2
        assert sorted(run_due()) == ["delivered", "delivered"]
    assert sorted(p["type"] for p in receiver.received) == [
        "carrier.status_changed",
        "policy.effective",
    ]
    assert {p["data"].get("policyId") for p in receiver.received} >= {policy.id}


def test_a_ping_goes_to_its_subscription_only_not_to_the_feed(api, viewer_api, private_ok):
    """A ping is for the subscription pinged: the change feed, which anyone who may view
    clients reads (a viewer may not list subscriptions), neither shows it nor filters on it."""
    with Receiver() as receiver:
        hook = subscribe(api, receiver.url)
        receiver.secret = hook["secret"]
        assert api.post(f"/v1/webhooks/{hook['id']}/ping").status_code == 202
        assert run_due() == ["delivered"]
    assert [p["type"] for p in receiver.received] == ["webhook.ping"]
    assert_problem(viewer_api.get("/v1/webhooks"), 403)
    for reader in (api, viewer_api):
        feed = reader.get("/v1/events", {"limit": 500})
        assert feed.status_code == 200, feed.content
        assert "webhook.ping" not in [e["type"] for e in feed.json()["results"]]
        refused = assert_problem(reader.get("/v1/events", {"type": "webhook.ping"}), 400)
        assert refused["detail"] == "type: Unknown event type: webhook.ping."


def test_receivers_on_this_machine_are_allowed_but_never_link_local_or_multicast(api, private_ok):
    """WEBHOOK_ALLOW_PRIVATE_TARGETS (on under `make run`) admits receivers on the developer's
    machine and network, never an address no receiver listens on: a cloud's metadata service
    (link-local), multicast, unspecified, also wrapped in IPv6; refused at creation, on a
    change, and at delivery."""
    for url in ("http://127.0.0.1:9/hook", "http://10.0.0.5/hook", "http://[::1]:9/hook"):
        assert api.post("/v1/webhooks", {"url": url}, format="json").status_code == 201, url
    hook_id = Webhook.objects.order_by("pk").first().pk
    for url in (
        "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1]/hook",
        "http://224.0.0.1/hook",
        "http://0.0.0.0:9/hook",
        "http://[::ffff:169.254.169.254]/latest/meta-data",
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",
        "http://100.100.100.200/latest/meta-data",
        "http://[fd00:ec2::254]/latest/meta-data",
        "http://255.255.255.255/hook",
        "http://240.0.0.1/hook",
        "http://[fec0::1]/hook",
    ):
        for refused in (
            api.post("/v1/webhooks", {"url": url}, format="json"),
            api.put(f"/v1/webhooks/{hook_id}", {"url": url}, format="json"),
        ):
            body = assert_problem(refused, 400)
            assert "private, loopback, link-local or multicast" in str(body), (url, body)
    assert Webhook.objects.get(pk=hook_id).url == "http://127.0.0.1:9/hook"
    assert Webhook.objects.count() == 3


def test_a_link_local_target_is_not_called_at_delivery(private_ok):
    from apps.webhooks.delivery import TargetRefused, target_check

    with pytest.raises(TargetRefused, match="link-local"):
        target_check("http://169.254.169.254/latest/meta-data")
    assert target_check("http://127.0.0.1:9/x").address == "127.0.0.1"


def test_a_ping_is_no_event_type_to_subscribe_to(api, private_ok):
    """The feed refuses `type=webhook.ping`; a subscription refuses it as a filter too (one of
    pings alone would hear nothing else), on creation and on a change, and keeps what it had."""
    body = {"url": "http://127.0.0.1:9/x", "eventTypes": ["webhook.ping", "policy.updated"]}
    refused = assert_problem(api.post("/v1/webhooks", body, format="json"), 400)
    assert "webhook.ping is no type to subscribe to" in str(refused), refused
    assert Webhook.objects.count() == 0
    hook = subscribe(api, "http://127.0.0.1:9/x", eventTypes=["policy.updated"])
    change = {"eventTypes": ["webhook.ping"]}
    assert_problem(api.put(f"/v1/webhooks/{hook['id']}", change, format="json"), 400)
    assert Webhook.objects.get(pk=hook["id"]).event_types == ["policy.updated"]
    assert api.post(f"/v1/webhooks/{hook['id']}/ping").status_code == 202
