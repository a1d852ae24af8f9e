"""Two saves of one change form at once: the second is checked against what the first wrote,
never against what was stored before it (tests/admin/test_stale_forms.py for the check).

PostgreSQL (CI's second pass): each thread has its own connection and the database
arbitrates, as between two server processes; SQLite serialises writers instead."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

from django.db import connection
from django.test import Client as BrowserClient

from apps.core.admin import ServiceFormAdmin
from tests.admin.test_stale_forms import STALE, change_url, opened
from tests.conftest import CONCURRENT_WRITERS, staff_member
from tests.factories import ClientFactory, PolicyFactory

pytestmark = CONCURRENT_WRITERS


def browser_of(user) -> BrowserClient:
    browser = BrowserClient()
    browser.force_login(user)
    return browser


def test_a_save_arriving_while_another_is_checked_waits_and_is_refused(
    master_data_back, groups, agency, monkeypatch
):
    tab_a = browser_of(staff_member([agency], groups, username="colleague"))
    tab_b = browser_of(staff_member([agency], groups))
    policy = PolicyFactory(client=ClientFactory(agency=agency), premium=Decimal("12500.00"))
    form_a, form_b = opened(tab_a, policy), opened(tab_b, policy)
    answers: list = []
    second: list[threading.Thread] = []
    checked = ServiceFormAdmin.stale_refusal

    def save_a():
        answers.append(tab_a.post(change_url(policy), {**form_a, "premium": "13000.00"}))
        connection.close()

    def checked_then_a_saves(self, request, obj, token):
        refusal = checked(self, request, obj, token)
        if not second:  # tab B's save has passed its check: tab A saves now
            second.append(threading.Thread(target=save_a))
            second[0].start()
            time.sleep(1.0)  # tab A's save has come in and waits, or has gone through
        return refusal

    monkeypatch.setattr(ServiceFormAdmin, "stale_refusal", checked_then_a_saves)
    saved_b = tab_b.post(change_url(policy), {**form_b, "description": "From tab B"})
    second[0].join(30)

    assert saved_b.status_code == 302, saved_b.content.decode()[:2000]
    [refused_a] = answers
    assert refused_a.status_code == 200
    [message] = refused_a.context["adminform"].form.non_field_errors()
    assert STALE in message
    policy.refresh_from_db()
    assert (policy.premium, policy.description) == (Decimal("12500.00"), "From tab B")
