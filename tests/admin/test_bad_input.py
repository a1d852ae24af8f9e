"""What staff type into the back office is answered on the page, never with a server error:
a relation box given something that is no record's id, a history version that is no number,
a filter's id past the column's range."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django_tasks_db.models import DBTaskResult

from apps.clients.models import Client
from apps.drivers.models import DriverVehicle
from apps.vehicles.models import Vehicle
from tests.admin.formdata import form_data
from tests.factories import (
    ClientFactory,
    DriverFactory,
    PolicyFactory,
    UserFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db

# What a browser's select box never sends, but a hand-made request or a stale form can.
NOT_AN_ID = ["abc", "1.5", "NaN", "9" * 5000, "x" * 5000, "\x00", "99999999999999999999", "-1"]


def _post(staff_client, url, **overrides):
    return staff_client.post(url, form_data(staff_client.get(url).content.decode(), **overrides))


def _refused(message: str) -> bool:
    # A NUL is refused before the choice is looked for (Django's form), the rest as no record.
    return message.startswith(("Select a valid choice", "Null characters are not allowed"))


def _invalid_choice(response, field: str) -> None:
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert field in errors
    assert _refused(errors[field][0])


@pytest.mark.parametrize("value", NOT_AN_ID)
def test_a_vehicle_for_a_client_that_is_no_id_is_a_form_error(staff_client, value):
    response = _post(staff_client, "/admin/vehicles/vehicle/add/", client=value, unit="U-1")
    _invalid_choice(response, "client")
    assert not Vehicle.objects.exists()


@pytest.mark.parametrize("value", NOT_AN_ID)
def test_a_clients_parent_or_state_that_is_no_id_is_a_form_error(staff_client, agency, value):
    carrier = ClientFactory(agency=agency, client_name="Steady Lines")
    url = f"/admin/clients/client/{carrier.pk}/change/"
    _invalid_choice(_post(staff_client, url, parent_client=value), "parent_client")
    _invalid_choice(_post(staff_client, url, state=value), "state")
    carrier.refresh_from_db()
    assert carrier.parent_client_id is None and carrier.client_name == "Steady Lines"


@pytest.mark.parametrize("value", ["abc", "1.5", "99999999999999999999", "\x00"])
def test_a_report_for_a_policy_that_is_no_id_is_a_form_error(staff_client, value):
    response = _post(staff_client, "/admin/reports/policypremiumreport/add/", policy=value)
    _invalid_choice(response, "policy")


@pytest.mark.parametrize("value", ["abc", "NaN", "99999999999999999999", "\x00"])
def test_a_drivers_new_vehicle_link_that_is_no_id_is_a_row_error(staff_client, agency, value):
    carrier = ClientFactory(agency=agency)
    driver = DriverFactory(client=carrier)
    url = f"/admin/drivers/driver/{driver.pk}/change/"
    page = staff_client.get(url).content.decode()
    data = form_data(page)
    prefix = next(k for k in data if k.endswith("-TOTAL_FORMS") and "vehicle" in k.lower())
    prefix = prefix.removesuffix("-TOTAL_FORMS")
    data.update({f"{prefix}-TOTAL_FORMS": "1", f"{prefix}-0-vehicle": value})
    response = staff_client.post(url, data)
    assert response.status_code == 200
    rows = next(f for f in response.context["inline_admin_formsets"] if f.formset.prefix == prefix)
    assert _refused(rows.formset.errors[0]["vehicle"][0])
    assert not DriverVehicle.objects.exists()


@pytest.mark.parametrize("version", ["abc", "1.5", "-1", "99999999999999999999", "9" * 5000])
def test_a_history_version_that_is_no_number_is_404(staff_client, agency, version):
    carrier = ClientFactory(agency=agency)
    url = f"/admin/clients/client/{carrier.pk}/history/"
    assert staff_client.get(url).status_code == 200
    assert staff_client.get(f"{url}{version}/").status_code == 404


@pytest.mark.parametrize(
    "path", ["vehicles/vehicle", "policies/policy", "drivers/driver", "documents/document"]
)
def test_a_client_filter_past_the_id_range_is_answered_as_an_unknown_client(
    staff_client, agency, path
):
    carrier = ClientFactory(agency=agency)
    VehicleFactory(client=carrier, unit="UNIT-MARK")
    PolicyFactory(client=carrier, policy_number="POLICY-MARK")
    DriverFactory(client=carrier, last_name="DRIVER-MARK")
    unknown = staff_client.get(f"/admin/{path}/", {"client__id__exact": "999999"})
    assert unknown.status_code == 200
    assert unknown.context["cl"].result_count == 0
    for huge in ("99999999999999999999", "9" * 5000):
        past = staff_client.get(f"/admin/{path}/", {"client__id__exact": huge})
        assert past.status_code == 200
        assert past.context["cl"].result_count == 0
        assert "MARK" not in past.content.decode()


@pytest.mark.parametrize("user", ["staff", "superuser"])
def test_view_on_site_for_an_id_that_is_no_key_of_the_model_is_404(client, staff, user):
    # A task result's key is a UUID: Django's redirect view let "4" raise (500).
    tasks = ContentType.objects.get_for_model(DBTaskResult).pk
    clients = ContentType.objects.get_for_model(Client).pk
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client.force_login(staff if user == "staff" else root)
    for path in (f"{tasks}/4", f"{tasks}/abc", f"{clients}/abc", f"{clients}/{'9' * 30}", "x/1"):
        assert client.get(f"/admin/r/{path}/").status_code == 404, path


def test_view_on_site_leads_only_to_records_the_staff_member_sees(
    staff_client, agency, other_agency, monkeypatch
):
    # No model has a page outside the admin yet; one that had would lead anyone to it.
    monkeypatch.setattr(Client, "get_absolute_url", lambda c: f"/carriers/{c.pk}/", raising=False)
    mine = ClientFactory(agency=agency)
    rival = ClientFactory(agency=other_agency)
    clients = ContentType.objects.get_for_model(Client).pk
    response = staff_client.get(f"/admin/r/{clients}/{mine.pk}/")
    assert response.status_code == 302
    assert response["Location"].endswith(f"/carriers/{mine.pk}/")
    assert staff_client.get(f"/admin/r/{clients}/{rival.pk}/").status_code == 404


EXPORTS = ["/admin/vehicles/vehicle/export/", "/admin/drivers/driver/export/"]
# What the changelist refuses as no filter of its own (a field the model lacks, the export
# action's own field sent in the URL, repeated or not a number).
NOT_A_FILTER = ["foo=1", "export_items=1&export_items=2", "export_items=abc"]


@pytest.mark.parametrize("url", EXPORTS)
@pytest.mark.parametrize("query", NOT_A_FILTER)
def test_an_export_page_given_what_no_filter_is_answers_as_its_changelist(staff_client, url, query):
    changelist = url.removesuffix("export/")
    assert staff_client.get(f"{changelist}?{query}")["Location"] == f"{changelist}?e=1"
    for response in (
        staff_client.get(f"{url}?{query}"),
        staff_client.post(f"{url}?{query}", {"format": "0", "resource": "0"}),
    ):
        assert response.status_code == 302
        assert response["Location"] == f"{url}?e=1"
    page = staff_client.get(f"{url}?e=1")
    assert page.status_code == 200
    assert b'name="format"' in page.content


@pytest.mark.parametrize("url", EXPORTS)
def test_an_export_page_still_refused_after_the_redirect_is_a_400(staff_client, url):
    assert staff_client.get(f"{url}?foo=1&e=1").status_code == 400
