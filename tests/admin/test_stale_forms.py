"""A change form saves only over the record it was opened on.

Two tabs of the back-office: tab B opens a record's page and keeps it; meanwhile the record
changes (tab A saves its page, soft-deletes it from the list, replaces a limit, or a PUT of
the API). Tab B's save is then refused with a message on the form, its input kept: nothing is
written, no event is emitted. A page reloaded after the change saves as usual.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client as BrowserClient

from apps.events.models import Event
from apps.masterdata.models import Insurer
from apps.policies.models import PolicyLimit
from apps.webhooks.models import Webhook
from tests.admin.formdata import form_data
from tests.conftest import staff_member
from tests.factories import ClientFactory, PolicyFactory, UserFactory

pytestmark = pytest.mark.django_db

STALE = "since you opened this page: your changes were not saved."


def change_url(obj) -> str:
    return f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/{obj.pk}/change/"


def changelist_url(obj) -> str:
    return f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/"


def opened(browser, obj, **overrides) -> dict:
    """The record's change form as a browser holds it once the page is shown."""
    return form_data(browser.get(change_url(obj)).content.decode(), **overrides)


@pytest.fixture
def colleague(groups, agency):
    """Tab A: another staff member of the agency, in their own browser."""
    browser = BrowserClient()
    browser.user = staff_member([agency], groups, username="colleague")
    browser.force_login(browser.user)
    return browser


def refusal(response) -> str:
    assert response.status_code == 200, response.status_code  # the form again
    [message] = response.context["adminform"].form.non_field_errors()
    return message


def events_of(agency) -> list[str]:
    return list(Event.objects.filter(agency=agency).values_list("type", flat=True))


def test_a_stale_policy_form_does_not_restore_a_policy_deleted_since(
    staff_client, colleague, agency
):
    policy = PolicyFactory(client=ClientFactory(agency=agency), description="As opened")
    tab_b = opened(staff_client, policy)
    deleted = colleague.post(
        changelist_url(policy), {"action": "soft_delete", "_selected_action": [policy.pk]}
    )
    assert deleted.status_code == 302
    before = events_of(agency)
    assert before[-2:] == ["policy.deleted", "carrier.status_changed"]  # cause, then effect

    response = staff_client.post(change_url(policy), {**tab_b, "description": "Edited in B"})

    message = refusal(response)
    assert message.startswith("This policy was changed by colleague at ")
    assert message.endswith(
        "since you opened this page: your changes were not saved. Reload it to see the "
        "change, then make yours again."
    )
    assert "Edited in B" in response.content.decode()  # what B typed is still on the form
    policy.refresh_from_db()
    assert policy.deleted is True and policy.description == "As opened"
    assert events_of(agency) == before  # no policy.restored, no carrier.status_changed


def test_a_stale_client_form_does_not_restore_a_client_deleted_since(
    staff_client, colleague, agency
):
    carrier = ClientFactory(agency=agency, client_name="Opened Freight")
    tab_b = opened(staff_client, carrier)
    colleague.post(
        changelist_url(carrier), {"action": "soft_delete", "_selected_action": [carrier.pk]}
    )
    before = events_of(agency)
    assert "client.deleted" in before

    response = staff_client.post(change_url(carrier), {**tab_b, "phone": "555-0100"})

    assert STALE in refusal(response)
    carrier.refresh_from_db()
    assert carrier.deleted is True and carrier.phone == ""
    assert events_of(agency) == before


def test_the_second_of_two_tabs_does_not_undo_the_first(staff_client, colleague, agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency), premium=Decimal("12500.00"))
    tab_a, tab_b = opened(colleague, policy), opened(staff_client, policy)
    saved = colleague.post(change_url(policy), {**tab_a, "premium": "13000.00"})
    assert saved.status_code == 302, saved.content.decode()[:2000]
    before = events_of(agency)

    response = staff_client.post(change_url(policy), {**tab_b, "description": "From tab B"})

    assert refusal(response).startswith("This policy was changed by colleague at ")
    policy.refresh_from_db()
    assert policy.premium == Decimal("13000.00") and policy.description == ""
    assert events_of(agency) == before


def test_a_page_reloaded_after_the_change_saves(staff_client, colleague, agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency), premium=Decimal("12500.00"))
    stale = opened(staff_client, policy)
    colleague.post(change_url(policy), opened(colleague, policy, premium="13000.00"))
    assert STALE in refusal(staff_client.post(change_url(policy), {**stale, "description": "B"}))

    response = staff_client.post(change_url(policy), opened(staff_client, policy, description="B"))

    assert response.status_code == 302, response.content.decode()[:2000]
    policy.refresh_from_db()
    assert (policy.premium, policy.description) == (Decimal("13000.00"), "B")


def test_saving_twice_from_pages_opened_in_turn_works(staff_client, agency):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    for premium in ("100.00", "200.00"):
        response = staff_client.post(
            change_url(policy), opened(staff_client, policy, premium=premium)
        )
        assert response.status_code == 302, response.content.decode()[:2000]
    policy.refresh_from_db()
    assert policy.premium == Decimal("200.00")


def test_a_limit_changed_in_another_tab_makes_the_policy_form_stale(
    staff_client, colleague, agency
):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    tab_b = opened(staff_client, policy)
    saved = colleague.post(
        change_url(policy), opened(colleague, policy, **{"limits-0-amount": "2000000.00"})
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    before = events_of(agency)

    response = staff_client.post(change_url(policy), {**tab_b, "description": "From tab B"})

    assert STALE in refusal(response)
    assert list(policy.limits.values_list("amount", flat=True)) == [Decimal("2000000.00")]
    assert events_of(agency) == before


def test_a_change_through_the_api_makes_the_form_stale(staff_client, api, agency, manager):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    tab = opened(staff_client, policy)
    body = api.get(f"/v1/policies/{policy.pk}").json()
    assert api.put(f"/v1/policies/{policy.pk}", {**body, "premium": "777.00"}, format="json")
    policy.refresh_from_db()
    assert policy.premium == Decimal("777.00")

    response = staff_client.post(change_url(policy), {**tab, "description": "From the admin"})

    assert refusal(response).startswith(f"This policy was changed by {manager.username} at ")
    policy.refresh_from_db()
    assert (policy.premium, policy.description) == (Decimal("777.00"), "")


def test_a_form_that_does_not_say_what_it_was_opened_on_is_refused(staff_client, agency):
    # A page opened before the check was deployed, or a hand-made POST: it may be stale.
    carrier = ClientFactory(agency=agency, client_name="Old Page Freight")
    data = opened(staff_client, carrier, client_name="Renamed")
    versions = [name for name in data if "version" in name]
    assert versions  # the page carries what it was opened on
    for name in versions:
        del data[name]

    response = staff_client.post(change_url(carrier), data)

    assert "your changes were not saved" in refusal(response)
    carrier.refresh_from_db()
    assert carrier.client_name == "Old Page Freight"


def test_a_change_that_stamps_nothing_makes_the_form_stale_too(staff_client, agency, settings):
    # A receiver's 410 deactivates its subscription in one UPDATE (apps.webhooks.delivery),
    # with no updated_at or updated_by: a page opened before would have switched it back on.
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    hook = Webhook.objects.create(agency=agency, url="http://127.0.0.1/hook", secret="whsec_x")
    tab = opened(staff_client, hook)
    Webhook.objects.filter(pk=hook.pk).update(
        active=False, deactivated_reason="The receiver answered 410 Gone."
    )

    response = staff_client.post(change_url(hook), {**tab, "description": "Renamed"})

    assert refusal(response) == (
        "This webhook was changed since you opened this page: your changes were not saved. "
        "Reload it to see the change, then make yours again."
    )
    hook.refresh_from_db()
    assert (hook.active, hook.description) == (False, "")


def test_an_insurers_rating_edited_in_a_stale_list_is_refused(client, agency):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client.force_login(root)
    insurer = Insurer.objects.create(name="Stale Mutual", name_key="stale mutual")
    url = f"/admin/masterdata/insurer/?q={insurer.name}"
    tab_b = form_data(client.get(url).content.decode(), _save="Save")
    tab_a = form_data(client.get(url).content.decode(), _save="Save")
    tab_a["form-0-am_best_rating"] = "A"
    assert client.post(url, tab_a).status_code == 302
    insurer.refresh_from_db()
    assert insurer.am_best_rating == "A"

    response = client.post(url, {**tab_b, "form-0-am_best_rating": "B"})

    assert response.status_code == 200
    assert STALE in response.content.decode()
    insurer.refresh_from_db()
    assert insurer.am_best_rating == "A"
