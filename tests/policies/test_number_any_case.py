"""A policy number is unique among the live policies of one agency and insurer whatever its case
(contract sections 6 and 13), as the `policy` filter finds it: `gwc-al-1` beside `GWC-AL-1` was
accepted, and `?policy=GWC-AL-1` then answered both. Every door answers the clash 409 (create,
update, restore, a client's move to another agency) or, in the admin, with the same message; the
database holds the rule too. The number keeps the spelling it was entered with."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction

from apps.policies.models import Policy
from tests.admin.formdata import form_data
from tests.conftest import assert_problem, page_ids
from tests.factories import ClientFactory, PolicyFactory, UserFactory

pytestmark = pytest.mark.django_db


def payload(client, number, insurer, **extra):
    return {
        "clientId": client.id,
        "policyNumber": number,
        "insurerName": insurer.name,
        "effectiveDate": "2026-01-01",
        "expirationDate": "2027-01-01",
        "coverageType": "AL",
        **extra,
    }


@pytest.fixture
def numbered(carrier):
    """The demo's auto liability policy of Great West Casualty, in the caller's agency."""
    return PolicyFactory(client=carrier, policy_number="GWC-AL-2026-0142")


def test_a_number_taken_in_another_case_is_409_and_the_filter_finds_one_policy(
    api, agency, numbered
):
    other_client = ClientFactory(agency=agency, client_name="Blue Sky Haulers", dot="2345678")
    body = payload(other_client, "gwc-al-2026-0142", numbered.insurer)

    refused = assert_problem(api.post("/v1/policies", body, format="json"), 409)

    assert refused["detail"] == (
        "A live policy numbered gwc-al-2026-0142 exists for this insurer in this agency."
    )
    assert page_ids(api.get("/v1/policies?policy=GWC-AL-2026-0142")) == [numbered.id]


def test_an_update_to_a_number_taken_in_another_case_is_409(api, carrier, numbered):
    second = PolicyFactory(client=carrier, policy_number="GWC-AL-2026-0200")

    response = api.put(
        f"/v1/policies/{second.id}", {"policyNumber": "Gwc-Al-2026-0142"}, format="json"
    )

    assert assert_problem(response, 409)["detail"] == (
        "A live policy numbered Gwc-Al-2026-0142 exists for this insurer in this agency."
    )
    assert api.get(f"/v1/policies/{second.id}").json()["policyNumber"] == "GWC-AL-2026-0200"


def test_a_number_freed_by_deletion_is_taken_as_entered_and_the_restore_is_409(
    api, carrier, numbered
):
    deleted = api.put(f"/v1/policies/{numbered.id}", {"deleted": True}, format="json")
    assert deleted.status_code == 200, deleted.content
    created = api.post(
        "/v1/policies", payload(carrier, "gwc-al-2026-0142", numbered.insurer), format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["policyNumber"] == "gwc-al-2026-0142"  # the spelling it was given

    restore = api.put(f"/v1/policies/{numbered.id}", {"deleted": False}, format="json")

    assert assert_problem(restore, 409)["detail"] == (
        "A live policy numbered GWC-AL-2026-0142 exists for this insurer in this agency."
    )
    assert api.get(f"/v1/policies/{numbered.id}").json()["deleted"] is True


def test_another_insurer_or_another_agency_may_hold_the_number_in_any_case(
    api, other_api, carrier, rival, numbered
):
    from apps.masterdata.models import Insurer

    elsewhere = Insurer.objects.create(name="Elsewhere Mutual", name_key="elsewhere mutual")
    mine = api.post("/v1/policies", payload(carrier, "gwc-al-2026-0142", elsewhere), format="json")
    theirs = other_api.post(
        "/v1/policies", payload(rival, "gwc-al-2026-0142", numbered.insurer), format="json"
    )

    assert (mine.status_code, theirs.status_code) == (201, 201), (mine.content, theirs.content)


def test_a_client_moving_to_an_agency_holding_its_number_in_another_case_is_409_naming_it(
    make_api, groups, agency, other_agency, carrier, rival
):
    both = make_api(
        UserFactory(username="both", agencies=[agency, other_agency], groups=[groups[0]])
    )
    PolicyFactory(client=carrier, policy_number="nl-2")
    PolicyFactory(client=rival, policy_number="NL-2")  # the same insurer, live

    refused = assert_problem(
        both.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json"), 409
    )

    assert refused["detail"] == (
        "The client's policy nl-2 (Great West Casualty Company) cannot move: a live policy "
        "with this number and insurer exists in that agency."
    )
    assert both.get(f"/v1/clients/{carrier.id}").json()["agencyId"] == agency.id


def test_the_admin_policy_form_refuses_a_number_taken_in_another_case(
    staff_client, agency, numbered
):
    second = PolicyFactory(client=ClientFactory(agency=agency), policy_number="GWC-AL-2026-0200")
    url = f"/admin/policies/policy/{second.pk}/change/"
    data = form_data(staff_client.get(url).content.decode(), policy_number="gwc-al-2026-0142")

    response = staff_client.post(url, data)

    assert response.status_code == 200  # the form again, with the service's message
    assert (
        "A live policy numbered gwc-al-2026-0142 exists for this insurer in this agency."
        in response.content.decode()
    )
    second.refresh_from_db()
    assert second.policy_number == "GWC-AL-2026-0200"


def test_the_database_refuses_a_number_taken_in_another_case(numbered):
    twin = Policy(
        client=numbered.client,
        policy_number="gwc-al-2026-0142",
        coverage_type=numbered.coverage_type,
        insurer=numbered.insurer,
        effective_date=numbered.effective_date,
        expiration_date=numbered.expiration_date,
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        twin.save()  # no full_clean(): as a race between two writers would


@pytest.fixture
def migration():
    return importlib.import_module("apps.policies.migrations.0011_policy_number_unique_any_case")


def test_the_migration_refuses_live_numbers_clashing_by_case_naming_them(
    migration, agency, other_agency, carrier, rival, numbered
):
    # Rows written before the rule: the database let them in, so no index may stand in the way.
    with connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX "{migration.CONSTRAINT}"')
    twin = PolicyFactory(client=carrier, policy_number="gwc-al-2026-0142")
    PolicyFactory(client=carrier, policy_number="Gwc-Al-2026-0142", deleted=True)  # deleted
    PolicyFactory(client=rival, policy_number="GWC-AL-2026-0142")  # another agency
    PolicyFactory(client=rival, policy_number="NL-1")
    PolicyFactory(client=rival, policy_number="nl-1")

    with pytest.raises(migration.NumbersClashByCase) as refused:
        migration.refuse_numbers_clashing_by_case(apps, None)

    message = str(refused.value)
    insurer = numbered.insurer
    assert f"agency {agency.pk} (Demo Agency), insurer {insurer.pk} ({insurer.name})" in message
    assert f"policy {numbered.pk} 'GWC-AL-2026-0142', policy {twin.pk} 'gwc-al-2026-0142'" in (
        message
    )
    assert f"agency {other_agency.pk} (Other Agency)" in message
    assert "'NL-1'" in message and "'nl-1'" in message
    assert "Gwc-Al" not in message
    assert "rename" in message.lower()


def test_the_migration_lets_distinct_numbers_through(migration, carrier, rival, numbered):
    PolicyFactory(client=carrier, policy_number="gwc-al-2026-0142", deleted=True)
    PolicyFactory(client=rival, policy_number="gwc-al-2026-0142")
    PolicyFactory(client=carrier, policy_number=None)
    PolicyFactory(client=carrier, policy_number=None)

    migration.refuse_numbers_clashing_by_case(apps, None)  # nothing to report
