"""Issue 13, item 15: caching, Content-Security-Policy, download-link methods, unknown formats."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from tests.admin.test_fleet_import import GOOD, _csv, _preview
from tests.conftest import assert_problem
from tests.documents.test_api import upload
from tests.factories import PolicyFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def download_url(api, carrier) -> str:
    return upload(api, carrier).json()["downloadUrl"]


@pytest.mark.parametrize(
    "path", ["/v1/me", "/v1/clients", "/v1/coverages/clients?dot=1234567", "/v1/nowhere"]
)
def test_v1_answers_are_never_stored(api, carrier, path):
    PolicyFactory(client=carrier)
    assert api.get(path)["Cache-Control"] == "no-store"


def test_v1_errors_without_credentials_are_never_stored():
    assert APIClient().get("/v1/clients")["Cache-Control"] == "no-store"


def test_download_link_is_never_stored(download_url):
    response = APIClient().get(download_url)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"


def test_head_on_a_download_link_answers_like_get_without_a_body(download_url):
    response = APIClient().head(download_url)
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment")


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_other_methods_on_a_download_link_are_problem_405(download_url, method):
    client = APIClient(enforce_csrf_checks=True)
    response = getattr(client, method)(download_url)
    body = assert_problem(response, 405)
    assert response["Allow"] == "GET, HEAD"
    assert method.upper() in body["detail"]


def test_a_malformed_download_path_is_problem_404():
    assert_problem(APIClient().get("/downloads/"), 404)


@pytest.mark.parametrize("fmt", ["xml", "csv", "html"])
def test_unknown_certificate_format_names_the_formats_offered(api, carrier, fmt):
    PolicyFactory(client=carrier)
    response = api.get(f"/v1/certificates/clients?dot=1234567&format={fmt}")
    body = assert_problem(response, 400)
    assert body["errors"][0]["field"] == "format"
    assert "json, pdf" in body["errors"][0]["message"]


def test_format_on_a_plain_resource_is_a_parameter_it_does_not_take(api):
    # Only JSON here: `format` is not among its parameters, so it is ignored as any other.
    answer = api.get("/v1/clients?format=xml")
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json"


def test_pdf_and_json_formats_still_work(api, carrier):
    PolicyFactory(client=carrier)
    assert api.get("/v1/certificates/clients?dot=1234567&format=pdf").status_code == 200
    assert api.get("/v1/certificates/clients?dot=1234567&format=json").status_code == 200


@pytest.mark.parametrize("path", ["/admin/login/", "/v1/docs"])
def test_admin_and_docs_carry_a_content_security_policy(client, path):
    response = client.get(path)
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert "<script>" not in response.content.decode()  # nothing inline for the policy to block


def test_logged_in_admin_pages_carry_the_policy(client, agency):
    staff = UserFactory(username="csp-staff", agencies=[agency])
    staff.is_staff = True
    staff.save()
    client.force_login(staff)
    assert "default-src 'self'" in client.get("/admin/")["Content-Security-Policy"]


def test_swagger_ui_script_is_served_from_the_same_origin(client):
    page = client.get("/v1/docs").content.decode()
    assert 'src="/v1/docs?script="' in page or "?script=" in page
    script = client.get("/v1/docs?script=")
    assert script.status_code == 200
    assert "SwaggerUIBundle" in script.content.decode()


# What a page runs inline, which `script-src 'self'` blocks: an event handler attribute
# (`onchange="..."`), a <script> element without `src`.
INLINE_HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=[^>]*>", re.IGNORECASE)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>", re.IGNORECASE)


def inline_code(response) -> list[str]:
    page = response.content.decode()
    return INLINE_HANDLER.findall(page) + INLINE_SCRIPT.findall(page)


@pytest.mark.parametrize("model", ["vehicles/vehicle", "drivers/driver"])
def test_the_export_page_binds_select_all_from_a_script_of_its_own_origin(staff_client, model):
    # The library's template wrote onchange="onSelectToggleChange(event)", which the policy
    # blocks: "Select all" did nothing.
    page = staff_client.get(f"/admin/{model}/export/")
    assert page.status_code == 200
    assert inline_code(page) == []
    assert 'class="select-toggle"' in page.content.decode()
    assert '<script src="/static/backoffice/export_select_all.js"' in page.content.decode()


DRIVER_HEADER = ["dot", "first_name", "last_name", "driver_type"]


def test_the_import_pages_hold_no_inline_code(staff_client, carrier):
    bad = [[*GOOD[0][:2], "NOT-A-VIN", *GOOD[0][3:]]]
    drivers = _csv([["1234567", "Ann", "Lee", "Company Driver"]], header=DRIVER_HEADER)
    pages = {
        "import form": staff_client.get("/admin/vehicles/vehicle/import/"),
        "preview": _preview(staff_client, _csv(GOOD)),
        "refusals": _preview(staff_client, _csv(bad)),
        "drivers' preview": _preview(staff_client, drivers, model="drivers/driver"),
    }
    assert {name: inline_code(page) for name, page in pages.items()} == {name: [] for name in pages}
    assert pages["preview"].context["confirm_form"] is not None
    assert pages["refusals"].context.get("confirm_form") is None
