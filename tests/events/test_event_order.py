"""Within one write, the change feed tells the story in order: the record's own event first,
then the status and compliance events it caused, then notices (`policy.expiring`); the daily
job likewise (`policy.effective` / `policy.expired`, then the status changes, then the
notices). The events of one transaction share a feed position and are ordered by id, so the
order they are written in is the order a reader sees (docs/webhooks.md, "The change feed"),
and each subscription's deliveries are created in that order too."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today
from apps.coverages.calendar import calendar_run
from apps.masterdata.models import CoverageType
from apps.policies.models import PolicyLimit
from apps.webhooks.models import Webhook, WebhookDelivery
from tests.admin.formdata import form_data
from tests.factories import PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)
CSL = "Combined Single Limit"


@pytest.fixture
def hook(api, agency) -> Webhook:
    """A subscription to every event, watching a profile that wants AL of 1,000,000."""
    rules = [{"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000.00"}]
    profile = api.post(
        "/v1/requirement-profiles", {"name": "Contract", "rules": rules}, format="json"
    )
    assert profile.status_code == 201, profile.content
    return Webhook.objects.create(
        agency=agency,
        url="https://receiver.example/hook",
        profile_id=profile.json()["id"],
        secret="whsec_x",
    )


def head(api) -> str | None:
    """The feed's cursor now (None while it is empty)."""
    return api.get("/v1/events", {"limit": 500}).json()["next"]


def types_after(api, start: str | None) -> list[str]:
    """The types of the events written since `start`, in the feed's order."""
    params = {"limit": 500} if start is None else {"limit": 500, "after": start}
    response = api.get("/v1/events", params)
    assert response.status_code == 200, response.content
    return [e["type"] for e in response.json()["results"]]


def delivered_types(hook: Webhook, since: int = 0) -> list[str]:
    """The event types of the subscription's deliveries, in the order they were created."""
    return list(
        WebhookDelivery.objects.filter(webhook=hook, pk__gt=since)
        .order_by("pk")
        .values_list("event__type", flat=True)
    )


def last_delivery(hook: Webhook) -> int:
    return (
        WebhookDelivery.objects.filter(webhook=hook)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
        or 0
    )


def al_policy(client, amount: str, **dates):
    policy = PolicyFactory(
        client=client, coverage_type=CoverageType.objects.get(code="AL"), **dates
    )
    PolicyLimit.objects.create(policy=policy, name=CSL, amount=amount)
    return policy


def put(api, path: str, body: dict) -> None:
    """A PUT over the API that succeeds."""
    response = api.put(path, body, format="json")
    assert response.status_code == 200, response.content


def scheduled(api, client, policy, **body):
    """A new unit of `client` scheduled on `policy` over the API."""
    unit = VehicleFactory(client=client)
    body = {"vehicleId": unit.id, "policyId": policy.id, **body}
    assert api.post("/v1/vehicles/coverages", body, format="json").status_code == 201
    return unit


def test_a_raised_limit_is_announced_before_the_verdict_it_passes(api, carrier, hook):
    policy = al_policy(carrier, "500000")
    start, since = head(api), last_delivery(hook)
    limits = [{"name": CSL, "amount": "1000000.00"}]
    put(api, f"/v1/policies/{policy.id}", {"limits": limits})
    assert types_after(api, start) == ["policy.updated", "compliance.changed"]
    assert delivered_types(hook, since) == ["policy.updated", "compliance.changed"]


def test_a_new_policy_is_announced_before_the_carrier_status_it_changes(api, carrier, hook):
    start = head(api)
    body = {
        "clientId": carrier.id,
        "effectiveDate": (today() - 10 * DAY).isoformat(),
        "expirationDate": (today() + 355 * DAY).isoformat(),
        "coverageType": "AL",
    }
    response = api.post("/v1/policies", body, format="json")
    assert response.status_code == 201, response.content
    assert types_after(api, start) == ["policy.created", "carrier.status_changed"]


def test_the_expiring_notice_of_a_write_comes_after_the_status_it_changes(api, carrier, hook):
    calendar_run(day=today())  # the day's job has run: the write announces the notice
    start = head(api)
    body = {
        "clientId": carrier.id,
        "effectiveDate": (today() - 300 * DAY).isoformat(),
        "expirationDate": (today() + 30 * DAY).isoformat(),
        "coverageType": "AL",
    }
    response = api.post("/v1/policies", body, format="json")
    assert response.status_code == 201, response.content
    assert types_after(api, start) == [
        "policy.created",
        "carrier.status_changed",
        "policy.expiring",
    ]


def test_a_cancellation_is_announced_before_the_statuses_it_ends(api, carrier, hook):
    policy = al_policy(carrier, "1000000")
    scheduled(api, carrier, policy, policyAddedDate=today().isoformat())
    start = head(api)
    body = {"cancellationDate": today().isoformat()}
    put(api, f"/v1/policies/{policy.id}", body)
    assert types_after(api, start) == [
        "policy.cancelled",
        "carrier.status_changed",
        "vehicle.status_changed",
        "compliance.changed",
    ]


def test_a_start_moved_to_today_comes_before_the_periods_and_statuses_it_moves(api, carrier, hook):
    renewal = al_policy(
        carrier, "1000000", effective_date=today() + 30 * DAY, expiration_date=today() + 395 * DAY
    )
    scheduled(api, carrier, renewal)
    start = head(api)
    body = {"effectiveDate": today().isoformat()}
    put(api, f"/v1/policies/{renewal.id}", body)
    assert types_after(api, start) == [
        "policy.updated",
        "vehicle.rescheduled",
        "carrier.status_changed",
        "vehicle.status_changed",
        "compliance.changed",
    ]


def test_a_unit_scheduled_then_removed_is_announced_before_its_status(api, carrier, hook):
    policy = al_policy(carrier, "1000000")
    unit = VehicleFactory(client=carrier)
    start = head(api)
    body = {"vehicleId": unit.id, "policyId": policy.id, "policyAddedDate": today().isoformat()}
    assert api.post("/v1/vehicles/coverages", body, format="json").status_code == 201
    body = {"vehicleId": unit.id, "policyId": policy.id, "coverageStatus": 1}
    put(api, "/v1/vehicles/coverages", body)
    assert types_after(api, start) == [
        "vehicle.scheduled",
        "vehicle.status_changed",
        "vehicle.removed",
        "vehicle.status_changed",
    ]


def test_a_deleted_unit_is_announced_before_its_status(api, carrier, hook):
    unit = VehicleFactory(client=carrier)
    start = head(api)
    put(api, f"/v1/vehicles/{unit.id}", {"deleted": True})
    assert types_after(api, start) == ["vehicle.updated", "vehicle.status_changed"]


def test_a_deleted_client_is_announced_before_its_and_its_units_statuses(api, carrier, hook):
    al_policy(carrier, "1000000")
    VehicleFactory(client=carrier)
    start = head(api)
    put(api, f"/v1/clients/{carrier.id}", {"deleted": True})
    assert types_after(api, start) == [
        "client.deleted",
        "carrier.status_changed",
        "vehicle.status_changed",
    ]


def test_an_admin_cancellation_is_announced_before_the_status_it_ends(
    api, staff_client, carrier, hook
):
    policy = al_policy(carrier, "1000000")
    start = head(api)
    url = f"/admin/policies/policy/{policy.pk}/change/"
    page = staff_client.get(url)
    assert page.status_code == 200
    data = form_data(page.content.decode(), cancellation_date=today().isoformat())
    response = staff_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert types_after(api, start) == [
        "policy.cancelled",
        "carrier.status_changed",
        "compliance.changed",
    ]


def test_the_days_job_announces_what_came_then_the_statuses_then_the_notices(api, carrier, hook):
    al_policy(carrier, "1000000", effective_date=today(), expiration_date=today() + 30 * DAY)
    start = head(api)
    calendar_run(day=today())
    assert types_after(api, start) == [
        "policy.effective",
        "carrier.status_changed",
        "compliance.changed",
        "policy.expiring",
    ]
