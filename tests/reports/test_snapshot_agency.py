"""A snapshot's producer and agency are the agency's it was frozen under.

A client that moves to another agency leaves its old agency's producer behind (on the client
and its policies), but a report frozen before the move still answered the old agency's
producer and name to the agency the client joined. A snapshot stays frozen; it records the
agency it was frozen under (`snapshot_agency`), and its `producer` and `agency` are shown only
to a viewer who acts for that agency (a superuser acts for every one), else null, as a who
field names only the people of the viewer's agencies (apps/core/people.py).
"""

from __future__ import annotations

import importlib
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command

from apps.policies.models import Policy
from apps.reports.models import PolicyPremiumReport
from apps.reports.services import premium_report_create
from tests.conftest import assert_problem, staff_member
from tests.factories import PolicyFactory, ProducerFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(make_api):
    """A superuser, who acts for every agency (and moves clients between them)."""
    return make_api(UserFactory(username="root", is_superuser=True))


def ok(response, status: int = 200):
    assert response.status_code == status, response.content
    return response.json()


@pytest.fixture
def moved_snapshot(api, root, agency, other_agency):
    """The probe's repro: a client of Demo Agency with its producer, a policy naming it, a
    report frozen by create_premium_report, then the client moved to Other Agency."""
    producer = ProducerFactory(agency=agency, name="Demo Producer")
    body = {"clientName": "Moving Freight", "agencyId": agency.id, "producerId": producer.id}
    client = ok(api.post("/v1/clients", body, format="json"), 201)["id"]
    body = {
        "clientId": client,
        "effectiveDate": "2026-01-01",
        "expirationDate": "2027-01-01",
        "coverageType": "AL",
        "producerName": "Demo Producer",
    }
    policy = ok(api.post("/v1/policies", body, format="json"), 201)["id"]
    out = StringIO()
    call_command("create_premium_report", str(policy), "--snapshot", stdout=out)
    report = int(out.getvalue().strip())
    before = ok(api.get(f"/v1/reports/{report}/raw-data"))
    fixed = before["fixedData"]
    assert (fixed["producer"], fixed["agency"]) == ("Demo Producer", "Demo Agency")
    ok(root.put(f"/v1/clients/{client}", {"agencyId": other_agency.id}, format="json"))
    return client, policy, report, before


def test_the_agency_a_client_joined_sees_no_producer_or_agency_of_a_snapshot_frozen_before(
    api, other_api, root, moved_snapshot
):
    _client, policy, report, before = moved_snapshot
    assert ok(other_api.get(f"/v1/policies/{policy}"))["producerName"] is None
    seen = ok(other_api.get(f"/v1/reports/{report}/raw-data"))
    assert seen == {
        **before,
        "fixedData": {**before["fixedData"], "producer": None, "agency": None},
    }
    assert_problem(api.get(f"/v1/reports/{report}/raw-data"), 404)
    assert ok(root.get(f"/v1/reports/{report}/raw-data")) == before


def test_the_old_agency_sees_its_names_again_when_the_client_moves_back(
    api, other_api, root, agency, moved_snapshot
):
    client, _policy, report, before = moved_snapshot
    ok(root.put(f"/v1/clients/{client}", {"agencyId": agency.id}, format="json"))
    assert ok(api.get(f"/v1/reports/{report}/raw-data")) == before
    assert_problem(other_api.get(f"/v1/reports/{report}/raw-data"), 404)


def test_a_snapshot_frozen_after_the_move_shows_the_new_agencys_names_to_it(
    other_api, other_agency, moved_snapshot
):
    _client, policy, _report, _before = moved_snapshot
    ProducerFactory(agency=other_agency, name="Other Producer")
    change = {"producerName": "Other Producer"}
    ok(other_api.put(f"/v1/policies/{policy}", change, format="json"))
    frozen = premium_report_create(user=None, policy=Policy.objects.get(pk=policy), snapshot=True)
    fixed = ok(other_api.get(f"/v1/reports/{frozen.id}/raw-data"))["fixedData"]
    assert (fixed["producer"], fixed["agency"]) == ("Other Producer", "Other Agency")


def test_a_computed_report_after_the_move_shows_the_new_agencys_names(
    other_api, other_agency, moved_snapshot
):
    _client, policy, _report, _before = moved_snapshot
    computed = premium_report_create(user=None, policy=Policy.objects.get(pk=policy))
    fixed = ok(other_api.get(f"/v1/reports/{computed.id}/raw-data"))["fixedData"]
    assert (fixed["producer"], fixed["agency"]) == (None, "Other Agency")
    ProducerFactory(agency=other_agency, name="Other Producer")
    change = {"producerName": "Other Producer"}
    ok(other_api.put(f"/v1/policies/{policy}", change, format="json"))
    fixed = ok(other_api.get(f"/v1/reports/{computed.id}/raw-data"))["fixedData"]
    assert (fixed["producer"], fixed["agency"]) == ("Other Producer", "Other Agency")


def test_snapshots_frozen_before_the_rule_are_filled_with_their_policys_agency(
    api, agency, carrier
):
    policy = PolicyFactory(client=carrier, producer=ProducerFactory(agency=agency, name="P"))
    frozen = premium_report_create(user=None, policy=policy, period="2026-11", snapshot=True)
    computed = premium_report_create(user=None, policy=policy, period="2026-11")
    # As the service stored a snapshot before the rule: no agency recorded.
    PolicyPremiumReport.objects.update(snapshot_agency=None)
    fixed = ok(api.get(f"/v1/reports/{frozen.id}/raw-data"))["fixedData"]
    assert (fixed["producer"], fixed["agency"]) == (None, None)

    migration = importlib.import_module("apps.reports.migrations.0002_snapshot_agency")
    migration.fill_snapshot_agency(apps, None)

    agencies = dict(PolicyPremiumReport.objects.values_list("pk", "snapshot_agency_id"))
    assert agencies == {frozen.pk: agency.pk, computed.pk: None}
    fixed = ok(api.get(f"/v1/reports/{frozen.id}/raw-data"))["fixedData"]
    assert (fixed["producer"], fixed["agency"]) == ("P", "Demo Agency")


def test_a_snapshot_frozen_before_the_rule_and_its_clients_move_is_filled_with_the_old_agency(
    other_api, root, agency, moved_snapshot
):
    """The fill reads the agency the policy's client was in when the report was frozen (its
    history), not the one it is in now: the agency the client joined still sees no names."""
    _client, _policy, report, before = moved_snapshot
    PolicyPremiumReport.objects.update(snapshot_agency=None)
    migration = importlib.import_module("apps.reports.migrations.0002_snapshot_agency")
    migration.fill_snapshot_agency(apps, None)

    assert PolicyPremiumReport.objects.get(pk=report).snapshot_agency_id == agency.pk
    fixed = ok(other_api.get(f"/v1/reports/{report}/raw-data"))["fixedData"]
    assert (fixed["producer"], fixed["agency"]) == (None, None)
    assert ok(root.get(f"/v1/reports/{report}/raw-data")) == before


def test_a_snapshot_whose_history_does_not_say_is_filled_with_no_agency(api, carrier):
    """No version of the policy recorded by the time it was frozen: no agency is recorded,
    and only a superuser sees the names."""
    policy = PolicyFactory(client=carrier, producer=ProducerFactory(agency=carrier.agency))
    frozen = premium_report_create(user=None, policy=policy, period="2026-11", snapshot=True)
    PolicyPremiumReport.objects.update(snapshot_agency=None)
    policy.history.all().delete()
    migration = importlib.import_module("apps.reports.migrations.0002_snapshot_agency")
    migration.fill_snapshot_agency(apps, None)

    assert PolicyPremiumReport.objects.get(pk=frozen.pk).snapshot_agency_id is None
    fixed = ok(api.get(f"/v1/reports/{frozen.id}/raw-data"))["fixedData"]
    assert (fixed["producer"], fixed["agency"]) == (None, None)


def test_the_schema_says_a_reports_agency_may_be_null(client):
    from drf_spectacular.generators import SchemaGenerator

    fields = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    fixed = fields["FixedData"]["properties"]
    assert fixed["agency"].get("nullable") is True
    assert fixed["producer"].get("nullable") is True


def test_the_admins_report_pages_show_the_new_agency_nothing_of_the_old_one(
    client, groups, other_agency, moved_snapshot
):
    # They show no snapshot content (a report's policy, client, period and freeze time): there
    # is nothing of the old agency's to leave out, as long as that stays so.
    _client, _policy, report, _before = moved_snapshot
    client.force_login(staff_member([other_agency], groups, "other-staff"))
    for page in (
        "/admin/reports/policypremiumreport/",
        f"/admin/reports/policypremiumreport/{report}/change/",
    ):
        response = client.get(page)
        assert response.status_code == 200
        text = response.content.decode()
        assert "Moving Freight" in text or f"/{report}/" in response.request["PATH_INFO"]
        assert "Demo Producer" not in text and "Demo Agency" not in text
