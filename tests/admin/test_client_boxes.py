"""The admin's client boxes (autocomplete) offer what their page can use.

A form's client box (a policy's, unit's or driver's client; a client's parent) offers what its
save accepts: live clients of the staff member's agencies (a deleted one was offered, then
refused by the service on save). The "By client" box of the policies', units', drivers' and
documents' lists still finds deleted clients: a deleted client's records are looked up by it.

Each box is asked as the admin's script asks it: the page's `<select>` says where
(`data-ajax--url`) and for which field (`data-app-label`, `data-model-name`,
`data-field-name`); the script adds the typed term (jQuery joins a URL that has a query with
`&`).
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlencode

import pytest

from tests.conftest import staff_member
from tests.factories import ClientFactory, DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
LIVE, DELETED = "Alpha Haul (DOT 5200001)", "Beta Haul (DOT 5200002)"
FORMS = {
    "policies/policy": PolicyFactory,
    "vehicles/vehicle": VehicleFactory,
    "drivers/driver": DriverFactory,
}


class _Boxes(HTMLParser):
    """The attributes of each autocomplete `<select>` of a page, by its name."""

    def __init__(self):
        super().__init__()
        self.boxes: dict[str, dict] = {}

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if tag == "select" and "admin-autocomplete" in (found.get("class") or ""):
            self.boxes[found["name"]] = found


def box(staff, path: str, name: str) -> dict:
    response = staff.get(path)
    assert response.status_code == 200, path
    reader = _Boxes()
    reader.feed(response.content.decode())
    return reader.boxes[name]


def offered(staff, select: dict, term: str = "Haul") -> list[str]:
    """What the box offers for `term`, asked as the admin's autocomplete script asks."""
    url = select["data-ajax--url"]
    query = {
        "term": term,
        "app_label": select["data-app-label"],
        "model_name": select["data-model-name"],
        "field_name": select["data-field-name"],
    }
    response = staff.get(url + ("&" if "?" in url else "?") + urlencode(query))
    assert response.status_code == 200, response.content
    return sorted(row["text"] for row in response.json()["results"])


@pytest.fixture
def world(client, groups, agency, other_agency):
    client.force_login(staff_member([agency], groups, "boxes"))
    alpha = ClientFactory(agency=agency, client_name="Alpha Haul", dot="5200001")
    ClientFactory(agency=agency, client_name="Beta Haul", dot="5200002", deleted=True)
    ClientFactory(agency=other_agency, client_name="Rival Haul", dot="5200003")
    return client, alpha


@pytest.mark.parametrize("path", FORMS)
def test_a_forms_client_box_offers_live_clients_only(world, path):
    staff, alpha = world
    record = FORMS[path](client=alpha)
    for page in (f"/admin/{path}/add/", f"/admin/{path}/{record.pk}/change/"):
        assert offered(staff, box(staff, page, "client")) == [LIVE], page


@pytest.mark.parametrize("path", [*FORMS, "documents/document"])
def test_a_lists_client_filter_still_finds_deleted_clients(world, path):
    staff, _alpha = world
    assert offered(staff, box(staff, f"/admin/{path}/", "client__id__exact")) == [LIVE, DELETED]


def test_the_client_forms_parent_box_offers_live_clients_only(world):
    staff, alpha = world
    assert offered(staff, box(staff, "/admin/clients/client/add/", "parent_client")) == [LIVE]


def test_the_parent_box_of_a_clients_page_does_not_offer_that_client(world, agency):
    """A client cannot be its own parent (the save refuses it): its page's box does not offer
    it, and offers the others it would accept."""
    staff, alpha = world
    ClientFactory(agency=agency, client_name="Gamma Haul", dot="5200004")
    parent_box = box(staff, f"/admin/clients/client/{alpha.pk}/change/", "parent_client")
    assert offered(staff, parent_box) == ["Gamma Haul (DOT 5200004)"]
