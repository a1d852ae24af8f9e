"""A frozen report stays frozen: no door (the service, the admin's action, two freezes at once)
freezes it a second time, so its raw data never moves once it answers "source": "snapshot"."""

from __future__ import annotations

import datetime as dt
import threading
import time
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction

from apps.coverages.services import VEHICLE, coverage_update
from apps.masterdata.models import UnitType
from apps.policies.models import PolicyRate
from apps.reports.models import PolicyPremiumReport
from apps.reports.services import premium_report_create, premium_report_snapshot
from tests.factories import ClientFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

D = dt.date
CHANGELIST = "/admin/reports/policypremiumreport/"


def rated_policy(agency):
    """A policy of one tractor rated 3,650 a year, scheduled all November 2026 (300.00)."""
    carrier = ClientFactory(agency=agency, dot="1234567")
    policy = PolicyFactory(
        client=carrier, effective_date=D(2026, 1, 1), expiration_date=D(2027, 1, 1)
    )
    tractor = UnitType.objects.get(name="Tractor")
    PolicyRate.objects.create(policy=policy, unit_type=tractor, annual_rate=Decimal("3650"))
    truck = VehicleFactory(client=carrier, unit_type=tractor)
    VehicleCoverageFactory(vehicle=truck, policy=policy, policy_added_date=D(2026, 1, 1))
    return policy, truck


def remove_mid_month(user, policy, truck) -> None:
    """The coverage changes after the freeze: computed now, November is 15 days (150.00)."""
    coverage_update(
        user=user,
        subject=VEHICLE,
        target_id=truck.id,
        policy_id=policy.id,
        coverage_status=1,
        policy_removed_date=D(2026, 11, 16),
    )


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


@pytest.mark.django_db
def test_the_service_refuses_to_freeze_a_frozen_report_again(api, manager, agency):
    policy, truck = rated_policy(agency)
    report = premium_report_create(user=None, policy=policy, period="2026-11", snapshot=True)
    before = api.get(f"/v1/reports/{report.id}/raw-data").json()
    assert before["premiumMapping"]["totalPremium"] == "300.00"
    remove_mid_month(manager, policy, truck)

    with pytest.raises(ValidationError, match="never frozen again"):
        premium_report_snapshot(report=report)

    assert api.get(f"/v1/reports/{report.id}/raw-data").json() == before


@pytest.mark.django_db
def test_the_admin_freezes_the_others_and_names_the_ones_frozen_already(
    api, manager, agency, staff_client
):
    policy, truck = rated_policy(agency)
    frozen = premium_report_create(user=None, policy=policy, period="2026-11", snapshot=True)
    live = premium_report_create(user=None, policy=policy, period="2026-11")
    before = api.get(f"/v1/reports/{frozen.id}/raw-data").json()
    remove_mid_month(manager, policy, truck)

    response = staff_client.post(
        CHANGELIST, {"action": "freeze_snapshot", "_selected_action": [frozen.pk, live.pk]}
    )

    assert response.status_code == 302
    frozen_at = PolicyPremiumReport.objects.get(pk=frozen.pk).snapshot_at
    assert messages_of(staff_client.get(CHANGELIST)) == [
        "Froze 1 record(s).",
        f"{frozen}: Frozen already on {frozen_at:%Y-%m-%d %H:%M:%S} UTC; "
        "a frozen report is never frozen again.",
    ]
    assert api.get(f"/v1/reports/{frozen.id}/raw-data").json() == before
    now_frozen = api.get(f"/v1/reports/{live.id}/raw-data").json()
    assert now_frozen["source"] == "snapshot"
    assert now_frozen["premiumMapping"]["totalPremium"] == "150.00"


@pytest.mark.django_db
def test_the_admin_freezing_only_frozen_reports_freezes_nothing(api, manager, agency, staff_client):
    policy, truck = rated_policy(agency)
    frozen = premium_report_create(user=None, policy=policy, period="2026-11", snapshot=True)
    before = api.get(f"/v1/reports/{frozen.id}/raw-data").json()
    remove_mid_month(manager, policy, truck)

    staff_client.post(CHANGELIST, {"action": "freeze_snapshot", "_selected_action": [frozen.pk]})

    [message] = messages_of(staff_client.get(CHANGELIST))
    assert message.startswith(f"{frozen}: Frozen already on ")
    assert api.get(f"/v1/reports/{frozen.id}/raw-data").json() == before


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs a server database (PostgreSQL)"
)
def test_two_freezes_of_one_report_at_once_write_once(master_data_back, manager, agency):
    # The second freeze starts while the first has computed and written but not committed:
    # it waits for the report's lock, then finds it frozen and is refused; the first's
    # snapshot stays, though the coverage changed in between.
    policy, truck = rated_policy(agency)
    report = premium_report_create(user=None, policy=policy, period="2026-11")
    answers: list = []

    def second():
        try:
            answers.append(premium_report_snapshot(report=report))
        except ValidationError as exc:
            answers.append(exc)
        finally:
            connection.close()

    with transaction.atomic():
        first = premium_report_snapshot(report=report)
        remove_mid_month(manager, policy, truck)
        other = threading.Thread(target=second)
        other.start()
        time.sleep(1.0)  # the second freeze waits on the report's lock
    other.join(30)

    [answer] = answers
    assert isinstance(answer, ValidationError) and "never frozen again" in str(answer)
    stored = PolicyPremiumReport.objects.get(pk=report.pk)
    assert stored.snapshot_at == first.snapshot_at
    assert stored.snapshot["premium_mapping"]["total_premium"] == "300.00"
