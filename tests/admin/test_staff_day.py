"""A staff member's day in the back-office, in Debian's Chromium at 1400x900, as demo-admin.

Find a carrier by DOT, see a unit's coverage, schedule a unit, import a 20-row fleet file
(two bad rows first, then the corrected file), download a certificate and a document, and
authorize Swagger UI with the demo credentials. Every step asserts what is on the screen.

The screenshots are the README's: `UPDATE_SCREENSHOTS=1 .venv/bin/python -m pytest
tests/admin/test_staff_day.py` writes them into docs/screenshots/ (otherwise into a
temporary directory, so an ordinary run leaves the work tree alone).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from django.utils import timezone

from tests.admin.test_browser import ARGS, CHROMIUM

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is needed"),
]
WIDTH, HEIGHT = 1400, 900
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
MAKES = ["Freightliner", "Kenworth", "Peterbilt", "Volvo", "Mack"]


def fleet_csv(*, bad: bool) -> bytes:
    """Prairie Haulers' 20 new units; with `bad`, row 4 names an unknown make and row 11
    has a VIN with the letter O (never used in VINs)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["dot", "unit", "vin", "year", "make", "unit_type", "plate", "plate_state"])
    for n in range(20):
        make, vin = MAKES[n % len(MAKES)], f"1KSHAUL0E{n:08d}"
        if bad and n == 3:
            make = "Frieghtliner"
        if bad and n == 10:
            vin = "1KSHAUL0EO0000010"
        writer.writerow(["2345678", f"P-{n + 1:02d}", vin, 2020, make, "Tractor", "", "KS"])
    return out.getvalue().encode()


@pytest.fixture
def demo_world(master_data_back, settings, tmp_path):
    """The documented demo world, seeded before the browser starts (Playwright's event loop
    forbids the ORM afterwards)."""
    from django.core.files.storage import default_storage

    from apps.demo.seed import seed_demo
    from apps.documents.models import Document

    settings.MEDIA_ROOT = str(tmp_path / "media")
    seed_demo()
    document = Document.objects.filter(client__dot="1234567", deleted=False).first()
    with default_storage.open(document.storage_name, "rb") as handle:
        return {"document_name": document.file_name, "document_bytes": handle.read()}


@pytest.fixture
def shots(tmp_path):
    target = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") else tmp_path / "shots"
    target.mkdir(parents=True, exist_ok=True)
    return target


@pytest.fixture
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--headless", *ARGS]
        )
        context = browser.new_context(
            accept_downloads=True, viewport={"width": WIDTH, "height": HEIGHT}
        )
        page = context.new_page()
        yield page
        context.close()
        browser.close()


def assert_fits(page, *headers: str) -> None:
    """The result table fits its container at 1400 px and these column headers are on
    screen (not scrolled off to the right)."""
    overflow = page.evaluate(
        "() => { const r = document.querySelector('.results');"
        " return r.scrollWidth - r.clientWidth; }"
    )
    assert overflow <= 1, f"the list overflows by {overflow}px"
    for header in headers:
        box = page.locator("#result_list thead th", has_text=header).first.bounding_box()
        assert box is not None and box["x"] + box["width"] <= WIDTH, header


def test_a_staff_members_day(live_server, demo_world, page, shots, tmp_path):
    base = live_server.url
    server_errors = []
    page.on("response", lambda r: server_errors.append(r.url) if r.status >= 500 else None)

    # Log in as demo-admin: the dashboard.
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "demo-admin")
    page.fill("#id_password", "demo-password")
    page.click("input[type=submit]")
    page.wait_for_selector("#dashboard")
    assert "Units not covered" in page.inner_text("#dashboard")
    page.screenshot(path=str(shots / "01-dashboard.png"))

    # Find a carrier by its DOT number; its page answers what is in force.
    page.goto(f"{base}/admin/clients/client/")
    page.fill("#searchbar", "1234567")
    page.press("#searchbar", "Enter")
    page.wait_for_load_state("load")
    assert page.locator("#result_list tbody tr").count() == 1
    assert "Rival Transport" not in page.content()
    page.click("#result_list >> text=Lone Star Freight LLC")
    page.wait_for_selector("#coverage-summary")
    answer = page.inner_text("#verification-today")
    assert "In force today" in answer and "covered" in answer
    assert "Compliance under federal-minimum" in answer
    assert "GWC-AL-2026-0142" in page.inner_text("#policies-in-force")
    page.screenshot(path=str(shots / "02-client.png"))

    # One click: the client's certificate.
    with page.expect_download() as download:
        page.click("#client-certificate")
    assert download.value.path().read_bytes().startswith(b"%PDF")

    # Unit 101: covered since when, under which policy; then one of its documents.
    for url, headers in (
        ("/admin/clients/client/", ("DOT", "In force")),
        ("/admin/policies/policy/", ("Term", "Status")),
        ("/admin/documents/document/", ("Size", "Uploaded", "File")),
        ("/admin/drivers/driver/", ("License number", "Status")),
    ):
        page.goto(base + url)
        assert_fits(page, *headers)
    page.goto(f"{base}/admin/documents/document/")
    listed = page.inner_text("#result_list")
    assert "KB" in listed and timezone.localtime().strftime(" %Z") in listed
    page.goto(f"{base}/admin/vehicles/vehicle/")
    assert_fits(page, "VIN", "Covered today", "Status")
    page.screenshot(path=str(shots / "03-vehicles.png"))
    page.fill("#searchbar", "1FUJGLDR7CLBP8834")
    page.press("#searchbar", "Enter")
    page.wait_for_load_state("load")
    page.click("#result_list >> text=101")
    page.wait_for_selector("#coverage-timeline")
    answer = page.inner_text("#verification-today")
    assert "Covered today" in answer and "ACTIVE" in answer and "GWC-AL-2026-0142" in answer
    timeline = page.inner_text("#coverage-timeline")
    assert "On schedule (4)" in timeline and "In force" in timeline
    assert "Maria Gonzalez" in page.inner_text("#vehicle-drivers")
    assert page.inner_text("#vehicle-lienholder").strip() != "None"
    page.screenshot(path=str(shots / "04-vehicle.png"), full_page=True)
    with page.expect_download() as download:
        page.click(f"#vehicle-documents >> text={demo_world['document_name']}")
    assert download.value.path().read_bytes() == demo_world["document_bytes"]

    # Schedule unit 103, which is not covered, on Lone Star's auto liability policy.
    page.goto(f"{base}/admin/vehicles/vehicle/?covered=no&q=3AKJHHDR5LSLA1234")
    row = page.locator("#result_list tbody tr", has_text="103")
    row.locator("input[name=_selected_action]").check()
    page.select_option("select[name=action]", "assign_to_policy")
    page.click("button[name=index]")
    page.wait_for_selector("select[name=policy]")
    # Only the unit's client's policies are offered, each named by its client and term.
    option = page.locator("select[name=policy] option", has_text="AL GWC-AL-2026-0142")
    assert option.inner_text().startswith("Lone Star Freight LLC — AL GWC-AL-2026-0142 (")
    page.select_option("select[name=policy]", value=option.get_attribute("value"))
    # The service's today (TIME_ZONE), not the browser's UTC date: from 00:00 to 06:00 UTC the
    # two differ, and a unit added "tomorrow" is not covered today.
    page.fill("input[name=policy_added_date]", timezone.localdate().isoformat())
    page.click("input[name=apply]")
    page.wait_for_selector(".messagelist")
    assert "Scheduled on AL GWC-AL-2026-0142" in page.inner_text(".messagelist")
    page.goto(f"{base}/admin/vehicles/vehicle/?covered=yes&q=3AKJHHDR5LSLA1234")
    assert page.locator("#result_list tbody tr").count() == 1

    # A 20-row fleet file with two bad rows: the preview names them, nothing is saved.
    bad, good = tmp_path / "prairie-fleet.csv", tmp_path / "prairie-fleet-fixed.csv"
    bad.write_bytes(fleet_csv(bad=True))
    good.write_bytes(fleet_csv(bad=False))
    page.goto(f"{base}/admin/vehicles/vehicle/import/")
    page.set_input_files("input[name=import_file]", str(bad))
    page.select_option("select[name=format]", label="csv")
    page.click("input[type=submit]")
    page.wait_for_load_state("load")
    content = page.content()
    assert "Unknown make “Frieghtliner”" in content
    assert "Bad VIN “1KSHAUL0EO0000010”" in content
    assert page.locator("form input[name=import_file_name]").count() == 0  # no confirm
    page.screenshot(path=str(shots / "05-import-refused.png"), full_page=True)

    # The corrected file: a dry-run preview of 20 new units, then the import.
    page.goto(f"{base}/admin/vehicles/vehicle/import/")
    page.set_input_files("input[name=import_file]", str(good))
    page.select_option("select[name=format]", label="csv")
    page.click("input[type=submit]")
    page.wait_for_selector("input[name=import_file_name]", state="attached")
    assert page.locator("table.import-preview tbody tr").count() == 20
    page.screenshot(path=str(shots / "06-import-preview.png"))
    page.click("form:has(input[name=import_file_name]) input[type=submit]")
    page.wait_for_selector(".messagelist")
    assert "20 new" in page.inner_text(".messagelist")
    page.goto(f"{base}/admin/vehicles/vehicle/?q=1KSHAUL0E")
    assert "20 vehicles" in page.inner_text("#changelist-form")

    # Swagger UI: authorize with the demo key and a token, then call GET /v1/me.
    page.goto(f"{base}/v1/docs")
    page.wait_for_selector("text=How to authenticate")
    assert "demo-api-key" in page.inner_text(".information-container")
    page.screenshot(path=str(shots / "07-swagger-how-to.png"))
    page.click("button.authorize")
    key = page.locator(".auth-container", has_text="apiKey").first
    key.locator("input").fill("demo-api-key")
    key.locator("button.authorize").click()
    page.click("button.btn-done")
    login = page.locator(".opblock-post:has-text('/v1/auth/token')").first
    login.locator(".opblock-summary").first.click()
    login.locator("button.try-out__btn").click()
    login.locator("textarea.body-param__text").fill(
        json.dumps({"username": "demo-admin", "password": "demo-password"})
    )
    login.locator("button.execute").click()
    login.locator(".live-responses-table tbody .response-col_status").first.wait_for()
    access = json.loads(login.locator(".live-responses-table .microlight").first.inner_text())
    page.locator("button.authorize").first.click()
    bearer = page.locator(".auth-container", has_text="bearerAuth").first
    bearer.locator("input").fill(access["access"])
    bearer.locator("button.authorize").click()
    page.click("button.btn-done")
    me = page.locator(".opblock-get:has-text('/v1/me')").first
    me.locator(".opblock-summary").first.click()
    me.locator("button.try-out__btn").click()
    me.locator("button.execute").click()
    status = me.locator(".live-responses-table tbody .response-col_status").first
    status.wait_for()
    assert status.inner_text().strip().startswith("200")
    assert "Demo Agency" in me.locator(".live-responses-table .microlight").first.inner_text()
    me.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "08-swagger-authorized.png"))

    assert server_errors == []
