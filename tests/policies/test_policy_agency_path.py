"""Records of a policy (its limits and rates, premium reports, coverages and their events) are
scoped through the policy's copy of its client's agency (`ClientAgencyMixin`), so the scoping
filter joins the policies and not the clients too (issue 18), and the copy follows a client
that moves."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from apps.clients.services import client_update
from apps.coverages.models import CoverageEvent, DriverCoverage, VehicleCoverage
from apps.policies.choices import LimitName
from apps.policies.models import PolicyLimit, PolicyRate
from apps.reports.models import PolicyPremiumReport
from tests.factories import PolicyFactory, UserFactory, VehicleCoverageFactory

pytestmark = pytest.mark.django_db

POLICY_RECORDS = (
    PolicyLimit,
    PolicyRate,
    PolicyPremiumReport,
    VehicleCoverage,
    DriverCoverage,
    CoverageEvent,
)


@pytest.mark.parametrize("model", POLICY_RECORDS, ids=lambda model: model.__name__)
def test_scoping_joins_the_policy_and_not_its_client(model, agency):
    sql = str(model.objects.for_agencies([agency.pk]).query)
    assert '"policies_policy"."agency_id" IN' in sql
    assert "clients_client" not in sql


def test_a_policys_records_follow_a_client_that_moves(groups, agency, other_agency, carrier):
    policy = PolicyFactory(client=carrier)
    limit = PolicyLimit.objects.create(
        policy=policy, name=LimitName.EACH_OCCURRENCE, amount=Decimal("1000000")
    )
    start = dt.date(2026, 1, 1)
    report = PolicyPremiumReport.objects.create(
        policy=policy, period_start=start, period_end=start + dt.timedelta(days=30)
    )
    coverage = VehicleCoverageFactory(policy=policy, vehicle__client=carrier)
    found = {
        model: list(model.objects.for_agencies([agency.pk]))
        for model in (PolicyLimit, PolicyPremiumReport, VehicleCoverage)
    }
    assert found == {
        PolicyLimit: [limit],
        PolicyPremiumReport: [report],
        VehicleCoverage: [coverage],
    }

    both = UserFactory(agencies=[agency, other_agency], groups=[groups[0]], is_superuser=True)
    client_update(user=both, instance=carrier, agency_id=other_agency.pk)
    for model, records in found.items():
        assert not model.objects.for_agencies([agency.pk]).exists()
        assert list(model.objects.for_agencies([other_agency.pk])) == records
