"""The back-office in a real browser: Debian's Chromium driven by Playwright."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import staff_member
from tests.factories import (
    ClientFactory,
    PolicyFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is needed"),
]
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def browser_page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = browser.new_context(
            accept_downloads=True, viewport={"width": 1280, "height": 900}
        )
        page = context.new_page()
        yield page
        context.close()
        browser.close()


def problems_of(page) -> list[str]:
    """What goes wrong on the page as it is used: a server error, a script error, a
    Content-Security-Policy violation."""
    found: list[str] = []
    page.on("response", lambda r: found.append(r.url) if r.status >= 500 else None)
    page.on("pageerror", lambda error: found.append(str(error)))
    page.on(
        "console",
        lambda m: found.append(m.text) if "Content Security Policy" in m.text else None,
    )
    return found


def log_in(page, base: str, username: str = "staff") -> None:
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "secret-password")
    page.click("input[type=submit]")
    page.wait_for_selector("#dashboard")


@pytest.fixture
def world(groups, agency, other_agency):
    """Created before the browser starts: Playwright's event loop forbids the ORM after."""
    staff_member([agency], groups, "staff")
    carrier = ClientFactory(agency=agency, client_name="Lone Star Freight LLC", dot="1234567")
    policy = PolicyFactory(client=carrier, policy_number="GWC-AL-0142")
    unit = VehicleFactory(client=carrier, unit="101", serial_number="1FUJGLDR7CLBP8834")
    VehicleCoverageFactory(vehicle=unit, policy=policy)
    rival = ClientFactory(agency=other_agency, client_name="Rival Transport Co", dot="7654321")
    return carrier, rival


def test_staff_finds_a_carrier_sees_its_coverage_and_downloads_its_certificate(
    master_data_back, live_server, world, browser_page, tmp_path
):
    carrier, rival = world
    page = browser_page
    server_errors = problems_of(page)

    log_in(page, live_server.url)
    assert "Back Office" in page.content()

    page.goto(f"{live_server.url}/admin/clients/client/")
    assert "Rival Transport Co" not in page.content()
    page.fill("#searchbar", "1234567")
    page.press("#searchbar", "Enter")
    page.wait_for_load_state("load")
    page.click("#result_list >> text=Lone Star Freight LLC")
    page.wait_for_selector("text=GWC-AL-0142")
    content = page.content()
    assert "GWC-AL-0142" in content and "1FUJGLDR7CLBP8834" in content
    page.screenshot(path=str(tmp_path / "client.png"), full_page=True)
    assert (tmp_path / "client.png").stat().st_size > 10_000

    page.goto(f"{live_server.url}/admin/clients/client/?q=1234567")
    page.check(f"input[name=_selected_action][value='{carrier.pk}']")
    page.select_option("select[name=action]", "download_client_certificates")
    with page.expect_download() as download_info:
        page.click("button[name=index]")
    pdf = download_info.value.path().read_bytes()
    assert pdf.startswith(b"%PDF")

    page.goto(f"{live_server.url}/admin/clients/client/{rival.pk}/change/")
    page.wait_for_load_state("load")
    assert "Rival Transport Co" not in page.content()
    assert "exist" in page.content()  # "… with ID … doesn't exist. Perhaps it was deleted?"
    assert server_errors == []


def test_staff_filters_the_units_by_a_client_found_as_they_type(
    master_data_back, live_server, world, browser_page, tmp_path
):
    # The "By client" filter is a search box (select2 on the admin's autocomplete): typing
    # finds the staff member's clients only, choosing one opens the filtered list, clearing
    # it opens the whole list again.
    carrier, rival = world
    page = browser_page
    problems = problems_of(page)  # select2 under the Content-Security-Policy too

    log_in(page, live_server.url)

    page.goto(f"{live_server.url}/admin/vehicles/vehicle/")
    page.click('details[data-filter-title="client"] .select2-selection')
    page.fill(".select2-search__field", "star")
    option = page.wait_for_selector(".select2-results__option >> text=Lone Star Freight LLC")
    page.fill(".select2-search__field", "transport")
    page.wait_for_selector(".select2-results__option >> text=No results found")
    assert "Rival Transport Co" not in page.content()
    page.fill(".select2-search__field", "lone")
    option = page.wait_for_selector(".select2-results__option >> text=Lone Star Freight LLC")
    with page.expect_navigation():
        option.click()
    assert f"client__id__exact={carrier.pk}" in page.url
    page.wait_for_selector("#result_list >> text=1FUJGLDR7CLBP8834")
    assert "Lone Star Freight LLC" in page.inner_text('details[data-filter-title="client"]')
    page.screenshot(path=str(tmp_path / "filtered.png"), full_page=True)

    with page.expect_navigation():
        page.click('details[data-filter-title="client"] .select2-selection__clear')
    assert "client__id__exact" not in page.url
    assert problems == []


LONG_NAME = "W" * 200  # a name of one unbroken word, as long as the field takes


@pytest.fixture
def long_named(groups, agency):
    staff_member([agency], groups, "staff")
    carrier = ClientFactory(agency=agency, client_name=LONG_NAME, dot="2345678")
    ClientFactory(agency=agency, client_name="Short Name Haulers", dot="3456789")
    return carrier


def test_a_long_unbroken_name_stays_within_the_page(
    master_data_back, live_server, long_named, browser_page, tmp_path
):
    page = browser_page
    page.set_viewport_size({"width": 1400, "height": 900})
    log_in(page, live_server.url)
    for path in (f"clients/client/{long_named.pk}/change/", "clients/client/"):
        page.goto(f"{live_server.url}/admin/{path}")
        page.wait_for_load_state("load")
        page.screenshot(path=str(tmp_path / (path.replace("/", "_") + ".png")), full_page=True)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1400, (path, width)  # the change page was 3,778 px wide
    # The list's other columns stay in view beside the name.
    dot = page.locator("#result_list td.field-dot").first.bounding_box()
    assert dot is not None and dot["x"] + dot["width"] <= 1400
