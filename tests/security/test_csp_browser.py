"""Issue 13, item 15: under the Content-Security-Policy, Swagger UI and the admin still work
in a real browser, and the browser reports no violation."""

from __future__ import annotations

import pytest

from tests.admin.test_browser import browser_page, log_in, problems_of, pytestmark  # noqa: F401
from tests.conftest import staff_member
from tests.factories import ClientFactory


@pytest.fixture
def staff(groups, agency):
    """Created before the browser starts: Playwright's event loop forbids the ORM after."""
    user = staff_member([agency], groups, "csp-staff")
    ClientFactory(agency=agency, client_name="Lone Star Freight LLC", dot="1234567")
    return user


def violations_of(page) -> list[str]:
    found: list[str] = []
    page.on(
        "console",
        lambda message: (
            found.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return found


def test_swagger_ui_renders_under_the_policy(master_data_back, live_server, browser_page):  # noqa: F811
    page = browser_page
    violations = violations_of(page)
    response = page.goto(f"{live_server.url}/v1/docs")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector(".swagger-ui .info .title", timeout=15_000)
    assert "Insurance Verification" in page.inner_text(".swagger-ui .info .title")
    page.wait_for_selector(".opblock-tag", timeout=15_000)  # the schema was fetched and drawn
    assert violations == []


def test_admin_works_under_the_policy(master_data_back, live_server, staff, browser_page):  # noqa: F811
    page = browser_page
    violations = violations_of(page)
    log_in(page, live_server.url, "csp-staff")
    page.goto(f"{live_server.url}/admin/clients/client/")
    page.check("#action-toggle")  # the admin's own script selects every row
    assert page.is_checked("input[name=_selected_action]")
    assert "Lone Star Freight LLC" in page.content()
    assert violations == []


@pytest.mark.parametrize("model", ["vehicles/vehicle", "drivers/driver"])
def test_select_all_on_an_export_page_works_under_the_policy(
    master_data_back,
    live_server,
    staff,
    browser_page,  # noqa: F811
    model,
):
    # The library's inline onchange="onSelectToggleChange(event)" was refused by the policy:
    # "Select all" did nothing and the console said so.
    page = browser_page
    problems = problems_of(page)
    log_in(page, live_server.url, "csp-staff")
    page.goto(f"{live_server.url}/admin/{model}/export/")
    fields = ".selectable-field-export-row input[type=checkbox]:not(.select-toggle)"
    boxes = page.locator(fields)
    assert boxes.count() > 2

    def checked() -> set[bool]:
        return {boxes.nth(i).is_checked() for i in range(boxes.count())}

    assert checked() == {True}
    page.uncheck("input.select-toggle")
    assert checked() == {False}
    page.click("label[for=id_select_all_toggle]")  # its label toggles it too
    assert page.is_checked("input.select-toggle") and checked() == {True}
    assert problems == []
