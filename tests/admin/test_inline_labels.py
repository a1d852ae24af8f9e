"""Every input of a tabular inline has an accessible name, as every other form field has its
label: a screen reader says "Amount, row 2", where it said only "edit text" (the column's
header is in another row of the table, which no input names)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from apps.masterdata.models import CoverageType
from apps.policies.models import PolicyLimit
from tests.factories import (
    AgencyFactory,
    ClientFactory,
    DriverFactory,
    PolicyFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

# An inline form's field: `<prefix>-<row>-<name>` (a row's number, or the template row's).
INLINE_FIELD = re.compile(r"[\w-]+-(?:\d+|__prefix__)-\w+")


class _Inputs(HTMLParser):
    """The visible inputs of a page, and the ids its labels name."""

    def __init__(self):
        super().__init__()
        self.inputs: list[dict] = []
        self.labelled: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "label" and a.get("for"):
            self.labelled.add(a["for"])
        if tag in ("input", "select", "textarea") and a.get("type") != "hidden":
            self.inputs.append(a)


def unnamed_inline_inputs(html: str) -> list[str]:
    page = _Inputs()
    page.feed(html)
    return [
        a["name"]
        for a in page.inputs
        if INLINE_FIELD.fullmatch(a.get("name") or "")
        and not (a.get("aria-label") or a.get("id") in page.labelled)
    ]


def inline_names(html: str) -> dict[str, str]:
    page = _Inputs()
    page.feed(html)
    return {
        a["name"]: a.get("aria-label")
        for a in page.inputs
        if INLINE_FIELD.fullmatch(a.get("name") or "")
    }


@pytest.fixture
def root(client):
    user = UserFactory(username="root-labels")
    user.is_staff = user.is_superuser = True
    user.save()
    client.force_login(user)
    return client


def test_a_policys_limits_are_named_by_column_and_row(root):
    policy = PolicyFactory(coverage_type=CoverageType.objects.get(code="AL"))
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    page = root.get(f"/admin/policies/policy/{policy.pk}/change/").content.decode()
    names = inline_names(page)
    assert names["limits-0-name"] == "Name, row 1"
    assert names["limits-0-amount"] == "Amount, row 1"
    assert names["limits-0-position"] == "Position, row 1"
    assert names["limits-0-DELETE"] == "Delete, row 1"
    assert names["limits-__prefix__-amount"] == "Amount, new row"
    assert unnamed_inline_inputs(page) == []


def test_every_tabular_inline_input_has_an_accessible_name(root):
    # The pages whose inlines take input (the others' inlines show records read-only).
    agency = AgencyFactory()
    carrier = ClientFactory(agency=agency)
    policy = PolicyFactory(client=carrier)
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    pages = [
        f"/admin/policies/policy/{policy.pk}/change/",
        f"/admin/drivers/driver/{DriverFactory(client=carrier).pk}/change/",
        f"/admin/agencies/agency/{agency.pk}/change/",
    ]
    for url in pages:
        response = root.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert inline_names(html), url  # the page has inline inputs to name
        assert unnamed_inline_inputs(html) == [], url
