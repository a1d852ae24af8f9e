"""Issue 14: master data and API keys are written in the admin through their services; a
rule only the service knows (a name already on the list) shows on the form, and the lists a
business rule fixes (the USPS states, a coverage line's code) are read-only."""

from __future__ import annotations

from html import unescape

import pytest

from apps.accounts.models import ApiKey
from apps.accounts.services import api_key_create
from apps.events.models import Event
from apps.masterdata.admin import NamedAdmin
from apps.masterdata.models import CoverageType, Make, State
from apps.policies.models import PolicyLimit
from apps.webhooks.models import Webhook
from tests.admin.formdata import form_data
from tests.factories import PolicyFactory, UserFactory, VehicleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def root_client(client):
    root = UserFactory(username="root-masterdata", is_staff=True, is_superuser=True)
    client.force_login(root)
    return client


def test_a_duplicate_make_is_refused_on_the_form(root_client):
    page = root_client.get("/admin/masterdata/make/add/").content.decode()
    response = root_client.post("/admin/masterdata/make/add/", form_data(page, name="KENWORTH"))
    assert response.status_code == 200
    assert "'KENWORTH' is already on this list." in unescape(response.content.decode())
    assert Make.objects.by_name("kenworth").count() == 1


def test_a_make_added_and_renamed_in_the_admin_is_found_by_its_name(root_client):
    page = root_client.get("/admin/masterdata/make/add/").content.decode()
    response = root_client.post("/admin/masterdata/make/add/", form_data(page, name="Zeta"))
    assert response.status_code == 302
    make = Make.objects.by_name("ZETA").get()
    url = f"/admin/masterdata/make/{make.pk}/change/"
    data = form_data(root_client.get(url).content.decode(), name="Zeta Trucks")
    assert root_client.post(url, data).status_code == 302
    assert Make.objects.by_name("zeta trucks").get().pk == make.pk


def test_a_make_in_use_since_the_delete_page_is_refused_with_a_message(root_client, monkeypatch):
    """Named by a unit saved after the confirmation page was shown: the service refuses (its
    409 in the API) and the admin says so on the make's page, where Django answered 500."""
    make = Make.objects.create(name="Zeta")
    VehicleFactory(make=make)
    monkeypatch.setattr(
        NamedAdmin, "get_deleted_objects", lambda self, objs, request: ([], {}, set(), [])
    )
    url = f"/admin/masterdata/make/{make.pk}/delete/"
    response = root_client.post(url, {"post": "yes"}, follow=True)
    assert response.redirect_chain == [(f"/admin/masterdata/make/{make.pk}/change/", 302)]
    assert "The make 'Zeta' is in use and cannot be deleted." in unescape(response.content.decode())
    assert Make.objects.filter(pk=make.pk).exists()


def test_states_are_read_only(root_client):
    texas = State.objects.get(code="TX")
    assert root_client.get("/admin/masterdata/state/add/").status_code == 403
    url = f"/admin/masterdata/state/{texas.pk}/change/"
    assert root_client.get(url).status_code == 200  # shown, not editable
    assert root_client.post(url, {"name": "Tejas", "code": "TJ"}).status_code == 403
    delete = f"/admin/masterdata/state/{texas.pk}/delete/"
    assert root_client.post(delete, {"post": "yes"}).status_code == 403
    texas.refresh_from_db()
    assert (texas.name, texas.code) == ("Texas", "TX")


def test_a_coverage_lines_code_is_set_once(root_client):
    line = CoverageType.objects.get(code="MTC")
    url = f"/admin/masterdata/coveragetype/{line.pk}/change/"
    page = root_client.get(url).content.decode()
    assert 'name="code"' not in page
    data = form_data(page, name="Motor Truck Cargo (renamed)", code="CARGO")
    assert root_client.post(url, data).status_code == 302
    line.refresh_from_db()
    assert (line.code, line.name) == ("MTC", "Motor Truck Cargo (renamed)")


def test_an_api_key_renamed_in_the_admin_keeps_its_hash(root_client):
    key, _raw = api_key_create(name="Old name")
    url = f"/admin/accounts/apikey/{key.pk}/change/"
    data = form_data(root_client.get(url).content.decode(), name="New name")
    assert root_client.post(url, data).status_code == 302
    renamed = ApiKey.objects.get(pk=key.pk)
    assert (renamed.name, renamed.key_hash, renamed.prefix) == (
        "New name",
        key.key_hash,
        key.prefix,
    )


def test_a_rating_changed_in_the_insurer_list_is_announced(root_client, api, carrier):
    """The list's editable rating saves through insurer_update, like the change form: the
    watched profile's verdict moves and `compliance.changed` says so."""
    rules = [
        {"kind": "coverage", "coverageType": "AL"},
        {"kind": "insurer_rating", "minimum": "A-"},
    ]
    response = api.post(
        "/v1/requirement-profiles", {"name": "Rated", "rules": rules}, format="json"
    )
    assert response.status_code == 201, response.content
    Webhook.objects.create(
        agency=carrier.agency,
        url="https://receiver.example/hook",
        profile_id=response.json()["id"],
        secret="whsec_x",
    )
    policy = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="AL"))
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    insurer = policy.insurer
    insurer.am_best_rating = "A"
    insurer.save()
    url = f"/admin/masterdata/insurer/?q={insurer.name}"
    data = form_data(root_client.get(url).content.decode(), **{"form-0-am_best_rating": "B"})
    data["_save"] = "Save"
    assert data["form-0-id"] == str(insurer.pk)
    assert root_client.post(url, data).status_code == 302
    insurer.refresh_from_db()
    assert insurer.am_best_rating == "B"
    [event] = Event.objects.filter(type="compliance.changed", client_id=carrier.pk)
    assert (event.data["from"], event.data["to"]) == ("PASS", "CAUTION")
