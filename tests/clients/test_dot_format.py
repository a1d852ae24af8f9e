"""A DOT number is read one way on every route (contract sections 6, 8 and 13): ASCII digits,
leading zeros dropped first, then 1 to 8 digits, not all zeros. `0005550006` is DOT 5550006
wherever a DOT is read, as `05550006` is; nine significant digits are no DOT anywhere, and
every route says so in the same words."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.clients.models import Client
from apps.core.dates import today
from apps.vehicles.models import Vehicle
from tests.admin.formdata import form_data
from tests.admin.test_fleet_import import _confirm, _csv, _preview
from tests.conftest import assert_problem
from tests.factories import ClientFactory, PolicyFactory

pytestmark = pytest.mark.django_db

PADDED = "0005550006"  # DOT 5550006, ten characters as sent
MESSAGE = "A DOT number is 1 to 8 digits, not all zeros (leading zeros are not counted)."


@pytest.fixture
def hauler(agency):
    client = ClientFactory(agency=agency, client_name="Padded Haulers", dot="5550006")
    start = today() - dt.timedelta(days=30)
    PolicyFactory(
        client=client,
        policy_number="PAD-1",
        effective_date=start,
        expiration_date=start + dt.timedelta(days=365),
    )
    return client


def test_verification_reads_a_padded_dot_as_its_number(api, hauler, carrier):
    one = api.get(f"/v1/coverages/clients?dot={PADDED}")
    assert one.status_code == 200, one.content
    (result,) = one.json()["results"]
    assert (result["dot"], result["found"], result["client"]["id"]) == ("5550006", True, hauler.id)

    many = api.get(f"/v1/coverages/clients?dots={PADDED},00001234567")
    assert many.status_code == 200, many.content
    assert [r["dot"] for r in many.json()["results"]] == ["5550006", "1234567"]
    assert all(r["found"] for r in many.json()["results"])

    judged = api.get(f"/v1/coverages/clients?dot={PADDED}&profile=federal-minimum")
    assert judged.status_code == 200, judged.content


def test_lists_certificates_and_documents_read_a_padded_dot(api, hauler):
    assert [c["id"] for c in api.get(f"/v1/clients?dot={PADDED}").json()["results"]] == [hauler.id]
    policies = api.get(f"/v1/policies?q={PADDED}")
    assert [p["policyNumber"] for p in policies.json()["results"]] == ["PAD-1"]
    legacy = api.post("/v1/policies/search", {"filter": {"q": PADDED}}, format="json")
    assert [p["policyNumber"] for p in legacy.json()["items"]] == ["PAD-1"]
    certificate = api.get(f"/v1/certificates/clients?dot={PADDED}")
    assert certificate.status_code == 200, certificate.content
    assert api.get(f"/v1/documents/clients?dot={PADDED}").status_code == 200


def test_client_writes_store_a_padded_dot_as_its_number(api, agency, hauler, carrier):
    taken = api.post(
        "/v1/clients", {"clientName": "Twin", "dot": PADDED, "agencyId": agency.pk}, format="json"
    )
    assert_problem(taken, 409)  # the same carrier as 5550006
    created = api.post(
        "/v1/clients",
        {"clientName": "New", "dot": "0009990001", "agencyId": agency.pk},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["dot"] == "9990001"
    updated = api.put(f"/v1/clients/{carrier.id}", {"dot": "000000001234568"}, format="json")
    assert updated.status_code == 200, updated.content
    assert updated.json()["dot"] == "1234568"


@pytest.mark.parametrize("dot", ["123456789", "000123456789", "12a", "0000000000"])
def test_what_is_no_dot_is_said_in_the_same_words_everywhere(api, agency, carrier, dot):
    for response in (
        api.post("/v1/clients", {"clientName": "X", "agencyId": agency.pk, "dot": dot}, "json"),
        api.put(f"/v1/clients/{carrier.id}", {"dot": dot}, format="json"),
    ):
        body = assert_problem(response, 400)
        assert [(e["field"], e["message"]) for e in body["errors"]] == [("dot", MESSAGE)]
    for path in (
        f"/v1/coverages/clients?dot={dot}",
        f"/v1/coverages/clients?dots=1234567,{dot}",
        f"/v1/clients?dot={dot}",
        f"/v1/certificates/clients?dot={dot}",
        f"/v1/documents/clients?dot={dot}",
    ):
        body = assert_problem(api.get(path), 400)
        field = "dots" if "dots=" in path else "dot"
        expected = [(field, f"'{dot}' is not a DOT number. {MESSAGE}")]
        assert [(e["field"], e["message"]) for e in body["errors"]] == expected, path


def test_the_admin_form_stores_a_padded_dot_as_its_number(staff_client, agency):
    page = staff_client.get("/admin/clients/client/add/").content.decode()
    data = form_data(page, client_name="Typed Freight", dot=PADDED, agency=agency.pk)
    response = staff_client.post("/admin/clients/client/add/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Client.objects.get(client_name="Typed Freight").dot == "5550006"


def test_a_fleet_file_finds_the_client_of_a_padded_dot(staff_client, hauler):
    rows = [[PADDED, "801", "1FUJGLDR7CLBP0801", "2021", "Volvo", "Tractor", "", "", ""]]
    preview = _preview(staff_client, _csv(rows))
    assert preview.context["confirm_form"] is not None, preview.content.decode()[-3000:]
    _confirm(staff_client, preview)
    assert Vehicle.objects.get(client=hauler).unit == "801"
