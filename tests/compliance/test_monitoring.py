"""`compliance.changed` for subscriptions with a profile: contract sections 14 and 15."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.compliance.monitoring import compliance_changes_for_day, compliance_watch
from apps.core.dates import today
from apps.events.models import Event
from apps.masterdata.models import CoverageType
from apps.policies.models import PolicyLimit
from apps.webhooks.models import Webhook, WebhookDelivery
from tests.admin.formdata import form_data
from tests.conftest import assert_problem
from tests.factories import ClientFactory, PolicyFactory, UserFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)
RULES = [
    {"kind": "coverage", "coverageType": "AL", "minimumLimit": "1000000.00"},
    {"kind": "expiration_notice", "days": 30},
]


def _al(client, amount="1000000", **dates):
    policy = PolicyFactory(
        client=client, coverage_type=CoverageType.objects.get(code="AL"), **dates
    )
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=amount)
    return policy


@pytest.fixture
def watched(api, agency):
    profile = api.post(
        "/v1/requirement-profiles", {"name": "Contract", "rules": RULES}, format="json"
    ).json()["id"]
    hook = Webhook.objects.create(
        agency=agency, url="https://receiver.example/hook", profile_id=profile, secret="whsec_x"
    )
    return profile, hook


def _changes(api) -> list[dict]:
    response = api.get("/v1/events?type=compliance.changed")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_time_alone_changes_the_verdict_on_the_day(api, carrier, watched):
    profile, hook = watched
    day = today() + 5 * DAY
    _al(carrier, effective_date=day - 300 * DAY, expiration_date=day + 30 * DAY)
    assert compliance_changes_for_day(day=day - DAY) == 0  # 31 days left both days
    assert compliance_changes_for_day(day=day) == 1  # 30 days left: expires soon
    [event] = _changes(api)
    assert event["clientId"] == carrier.id and event["agencyId"] == carrier.agency_id
    data = event["data"]
    assert (data["profileId"], data["from"], data["to"]) == (profile, "PASS", "CAUTION")
    assert data["asOf"] == day.isoformat()
    assert [r["code"] for r in data["reasons"]] == ["EXPIRES_SOON"]
    assert WebhookDelivery.objects.filter(webhook=hook, event_id=event["id"].removeprefix("evt_"))


def test_expiry_fails_the_client(api, carrier, watched):
    day = today() + 5 * DAY
    _al(carrier, effective_date=day - 300 * DAY, expiration_date=day)
    assert compliance_changes_for_day(day=day) == 1
    [event] = _changes(api)
    assert (event["data"]["from"], event["data"]["to"]) == ("CAUTION", "FAIL")
    assert [r["code"] for r in event["data"]["reasons"]] == ["COVERAGE_MISSING"]


def test_a_write_that_changes_the_verdict_emits(api, carrier, watched):
    policy = _al(carrier)
    limit = policy.limits.get()
    with compliance_watch(client_ids=[carrier.id]):
        limit.amount = 500_000
        limit.save()
    [event] = _changes(api)
    assert (event["data"]["from"], event["data"]["to"]) == ("PASS", "FAIL")
    assert event["data"]["reasons"][0]["code"] == "LIMIT_BELOW_MINIMUM"
    with compliance_watch(client_ids=[carrier.id]):
        policy.description = "no change to the verdict"
        policy.save()
    assert len(_changes(api)) == 1


def test_the_events_reasons_are_verifications_reasons(api, carrier, watched):
    # One shape for a verdict's reasons (ReasonSerializer), in the answer and in the event.
    profile, _ = watched
    _al(carrier, amount="1000000", expiration_date=today() + 10 * DAY)
    with compliance_watch(client_ids=[carrier.id]):
        PolicyLimit.objects.update(amount=500_000)
    [event] = _changes(api)
    response = api.get(f"/v1/coverages/clients?id={carrier.id}&profile={profile}")
    assert response.status_code == 200, response.content
    [result] = response.json()["results"]
    assert [r["code"] for r in event["data"]["reasons"]] == ["LIMIT_BELOW_MINIMUM", "EXPIRES_SOON"]
    assert event["data"]["reasons"] == result["compliance"]["reasons"]
    # The same keys; not their order: PostgreSQL's jsonb keeps an event's data in its own order.
    assert set(event["data"]["reasons"][0]) == {
        "code",
        "coverageType",
        "required",
        "actual",
        "message",
    }


def test_nothing_is_watched_without_a_subscription_naming_a_profile(
    api, carrier, django_assert_max_num_queries
):
    day = today() + 5 * DAY
    _al(carrier, effective_date=day - 300 * DAY, expiration_date=day)
    with django_assert_max_num_queries(2):
        assert compliance_changes_for_day(day=day) == 0
    assert not Event.objects.filter(type="compliance.changed").exists()


def test_other_agencies_are_not_told(api, other_api, carrier, rival, watched):
    day = today() + 5 * DAY
    _al(rival, effective_date=day - 300 * DAY, expiration_date=day)
    assert compliance_changes_for_day(day=day) == 0
    assert _changes(other_api) == []


def test_daily_query_count_is_constant_in_clients(
    api, agency, watched, django_assert_max_num_queries
):
    day = today() + 5 * DAY

    def clients(n):
        for k in range(n):
            _al(
                ClientFactory(agency=agency, dot=None),
                effective_date=day - 300 * DAY,
                expiration_date=day + (30 if k % 2 else 90) * DAY,
            )

    clients(2)
    with django_assert_max_num_queries(40) as few:
        assert compliance_changes_for_day(day=day) == 1
    Event.objects.all().delete()
    WebhookDelivery.objects.all().delete()
    clients(40)
    with django_assert_max_num_queries(400) as many:
        assert compliance_changes_for_day(day=day) == 21
    per_event = (len(many.captured_queries) - len(few.captured_queries)) / 20
    # Reading is constant; each event written costs its own inserts only.
    reads = len(few.captured_queries) - per_event
    assert len(many.captured_queries) == reads + 21 * per_event


def test_new_rules_change_the_verdicts_of_watched_clients(api, carrier, watched):
    profile, _ = watched
    _al(carrier, amount="1000000")
    rules = [{"kind": "coverage", "coverageType": "AL", "minimumLimit": "2000000.00"}]
    response = api.put(f"/v1/requirement-profiles/{profile}", {"rules": rules}, format="json")
    assert response.status_code == 200, response.content
    [event] = _changes(api)
    assert (event["data"]["from"], event["data"]["to"]) == ("PASS", "FAIL")
    api.put(f"/v1/requirement-profiles/{profile}", {"name": "Renamed"}, format="json")
    assert len(_changes(api)) == 1


def test_cancelling_a_policy_through_the_api_emits_compliance_changed(api, carrier, watched):
    profile, hook = watched
    policy = _al(carrier)
    assert _changes(api) == []
    response = api.put(
        f"/v1/policies/{policy.id}", {"cancellationDate": today().isoformat()}, format="json"
    )
    assert response.status_code == 200, response.content
    [event] = _changes(api)
    assert (event["clientId"], event["data"]["profileId"]) == (carrier.id, profile)
    assert (event["data"]["from"], event["data"]["to"]) == ("PASS", "FAIL")


def test_a_cancellation_effective_today_is_announced_once_not_again_by_the_day_job(
    api, carrier, watched
):
    policy = _al(carrier)
    response = api.put(
        f"/v1/policies/{policy.id}", {"cancellationDate": today().isoformat()}, format="json"
    )
    assert response.status_code == 200, response.content
    assert len(_changes(api)) == 1  # PASS -> FAIL, announced by the write
    # The day's job compares yesterday (in force) with today (cancelled): the write said it.
    assert compliance_changes_for_day(day=today()) == 0
    assert len(_changes(api)) == 1


def test_a_missed_day_caught_up_later_leaves_the_last_verdict_current(api, carrier, watched):
    missed = today() - 2 * DAY
    _al(carrier, effective_date=missed - 300 * DAY, expiration_date=missed)  # fails on `missed`
    # Today a write gives the client a new policy, and announces FAIL -> PASS.
    with compliance_watch(client_ids=[carrier.id]):
        _al(carrier, effective_date=today(), expiration_date=today() + 400 * DAY)
    [written] = _changes(api)
    assert (written["data"]["from"], written["data"]["to"]) == ("FAIL", "PASS")
    # The worker was down on `missed`; caught up now, its CAUTION -> FAIL would come after the
    # PASS in the feed and leave a subscriber believing the client fails: left out.
    assert compliance_changes_for_day(day=missed) == 0
    assert [e["id"] for e in _changes(api)] == [written["id"]]


def test_a_client_write_that_keeps_the_verdict_emits_nothing(api, carrier, watched):
    _al(carrier)
    response = api.put(f"/v1/clients/{carrier.id}", {"phone": "512-555-0199"}, format="json")
    assert response.status_code == 200, response.content
    assert _changes(api) == []


def test_a_new_insurer_rating_in_the_admin_emits_compliance_changed(client, api, agency, carrier):
    profile = api.post(
        "/v1/requirement-profiles",
        {
            "name": "Rated",
            "rules": [
                {"kind": "coverage", "coverageType": "AL"},
                {"kind": "insurer_rating", "minimum": "A-"},
            ],
        },
        format="json",
    ).json()["id"]
    Webhook.objects.create(
        agency=agency, url="https://receiver.example/hook", profile_id=profile, secret="whsec_x"
    )
    policy = _al(carrier)
    insurer = policy.insurer
    insurer.am_best_rating = "A"
    insurer.save()
    root = UserFactory(username="root-rating")
    root.is_staff = root.is_superuser = True
    root.save()
    client.force_login(root)
    url = f"/admin/masterdata/insurer/{insurer.pk}/change/"
    data = form_data(client.get(url).content.decode(), am_best_rating="B")
    assert client.post(url, data).status_code == 302
    [event] = _changes(api)
    assert (event["data"]["from"], event["data"]["to"]) == ("PASS", "CAUTION")
    assert [r["code"] for r in event["data"]["reasons"]] == ["INSURER_RATING_BELOW_MINIMUM"]


def _subscribe(api, **fields):
    return api.post("/v1/webhooks", {"url": "https://93.184.216.34/hook", **fields}, format="json")


def test_a_subscription_without_a_profile_gets_no_compliance_changed(api, carrier, watched):
    _, hook = watched
    everything = _subscribe(api, eventTypes=[])
    assert everything.status_code == 201, everything.content
    policy = _al(carrier)
    response = api.put(
        f"/v1/policies/{policy.id}",
        {"limits": [{"name": "Combined Single Limit", "amount": "500000.00"}]},
        format="json",
    )
    assert response.status_code == 200, response.content
    [event] = _changes(api)  # the feed lists the agency's events as before
    delivered = WebhookDelivery.objects.filter(event_id=event["id"].removeprefix("evt_"))
    assert list(delivered.values_list("webhook_id", flat=True)) == [hook.id]
    # The subscription to every type still gets the policy's own event.
    assert WebhookDelivery.objects.filter(
        webhook_id=everything.json()["id"], event__type="policy.updated"
    ).exists()


def test_compliance_changed_without_a_profile_is_a_400_on_profile_id(api, watched):
    profile, _ = watched
    message = "Required when eventTypes names compliance.changed"
    refused = _subscribe(api, eventTypes=["compliance.changed", "policy.created"])
    body = assert_problem(refused, 400)
    [error] = body["errors"]
    assert error["field"] == "profileId" and error["message"].startswith(message)
    made = _subscribe(api, eventTypes=["compliance.changed"], profileId=profile)
    assert made.status_code == 201, made.content
    url = f"/v1/webhooks/{made.json()['id']}"
    assert_problem(api.put(url, {"profileId": None}, format="json"), 400)
    plain = _subscribe(api, eventTypes=["policy.created"]).json()
    assert_problem(
        api.put(
            f"/v1/webhooks/{plain['id']}", {"eventTypes": ["compliance.changed"]}, format="json"
        ),
        400,
    )
    assert api.put(url, {"description": "kept"}, format="json").status_code == 200
