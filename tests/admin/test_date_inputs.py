"""Every date a staff member types in the back office is read as the API reads one
(YYYY-MM-DD or MM-dd-yyyy, contract section 6), as well as it was read before (12/01/2026,
"Dec 1 2026"), and one it cannot read is refused naming the forms it takes, in the API's
words."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import DATE_MESSAGE, iso_text, today, us_text
from apps.policies.models import Policy
from tests.admin.formdata import form_data
from tests.factories import ClientFactory, DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


def _written(day: dt.date) -> dict[str, str]:
    """One day written each way the admin reads it."""
    return {
        "iso": iso_text(day),
        "contract": us_text(day),  # MM-dd-yyyy, the API's other form
        "slashes": us_text(day, "/"),
        "words": day.strftime("%b %d %Y"),
    }


@pytest.mark.parametrize("form", ["iso", "contract", "slashes", "words"])
def test_the_policy_form_reads_a_date_in_the_apis_forms_and_its_own(staff_client, agency, form):
    policy = PolicyFactory(client=ClientFactory(agency=agency))
    expires = today() + 200 * DAY
    url = f"/admin/policies/policy/{policy.pk}/change/"
    data = form_data(staff_client.get(url).content.decode())
    data["expiration_date"] = _written(expires)[form]
    response = staff_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Policy.objects.get(pk=policy.pk).expiration_date == expires


NOT_A_DATE = ["12.01.2026", "2026-13-01", "02-30-2026", "tomorrow", "12-1-2026x"]


def _date_inputs(agency) -> list[tuple[str, list[str]]]:
    """Every admin page with date inputs: its URL and the inputs."""
    carrier = ClientFactory(agency=agency)
    policy = PolicyFactory(client=carrier)
    driver = DriverFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    return [
        ("/admin/policies/policy/add/", ["effective_date", "expiration_date"]),
        (f"/admin/policies/policy/{policy.pk}/change/", ["cancellation_date"]),
        (
            f"/admin/drivers/driver/{driver.pk}/change/",
            ["date_of_birth", "hire_date", "license_expiration_date"],
        ),
        (
            f"/admin/coverages/vehiclecoverage/add/?vehicle={unit.pk}&policy={policy.pk}",
            ["policy_added_date"],
        ),
    ]


def _errors(staff_client, url: str, field: str, text: str) -> list[str]:
    data = form_data(staff_client.get(url).content.decode(), **{field: text})
    response = staff_client.post(url, data)
    if response.status_code == 302:
        return []
    return response.context["adminform"].form.errors.get(field, [])


def test_every_admin_date_input_refuses_what_is_no_date_naming_the_forms(staff_client, agency):
    for url, fields in _date_inputs(agency):
        for field in fields:
            for text in NOT_A_DATE:
                assert _errors(staff_client, url, field, text) == [DATE_MESSAGE], (url, field)


def test_every_admin_date_input_reads_mm_dd_yyyy(staff_client, agency):
    day = us_text(today() - 30 * DAY)
    unread = {DATE_MESSAGE, "Enter a valid date."}  # a rule of the service may refuse it
    for url, fields in _date_inputs(agency):
        for field in fields:
            assert not unread & set(_errors(staff_client, url, field, day)), (url, field)


def test_the_assign_action_reads_the_apis_date_forms(staff_client, agency):
    carrier = ClientFactory(agency=agency)
    policy = PolicyFactory(client=carrier)
    unit = VehicleFactory(client=carrier)
    base = {
        "action": "assign_to_policy",
        "_selected_action": [unit.pk],
        "apply": "Assign",
        "policy": policy.pk,
    }
    refused = staff_client.post(
        "/admin/vehicles/vehicle/", {**base, "policy_added_date": "12.01.2026"}
    )
    assert refused.status_code == 200
    assert refused.context["form"].errors["policy_added_date"] == [DATE_MESSAGE]
    taken = staff_client.post(
        "/admin/vehicles/vehicle/", {**base, "policy_added_date": us_text(today())}
    )
    assert taken.status_code == 302
    assert unit.coverages.get().policy_added_date == today()
