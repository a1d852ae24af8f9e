"""Output shapes of coverage periods that other apps' responses and the admin pages embed.

They live outside `api/` because the vehicle and driver details and the back-office pages
render them too (no app imports another app's `api` package). The date the answer speaks for
is `context["on"]` (default: today in the service's time zone).
"""

from __future__ import annotations

import datetime as dt

from rest_framework import serializers

from apps.core.dates import today
from apps.core.models import is_live
from apps.core.money import format_money
from apps.core.serializers import MoneyField, ShapedSerializer
from apps.coverages.choices import CoverageStatus

ISO = "iso-8601"


def context_date(serializer: serializers.Field) -> dt.date:
    """The as-of date of a rendering, fixed once per response in the root's context."""
    context = serializer.context
    if "on" not in context:
        context["on"] = today()
    return context["on"]


def set_context_unit(serializer: serializers.Serializer, unit) -> None:
    """Whether the vehicle or driver a rendering shows is live (`is_live(unit, "client")`), for
    its periods' `covered` (`Coverage.covered_on`): set by the detail that renders them."""
    serializer.context["unit_live"] = is_live(unit, "client")


class CoverageStatusNameField(serializers.CharField):
    """The label of the record's coverage status code (`coverageStatusName`), read-only."""

    def __init__(self, **kwargs):
        kwargs.setdefault("source", "coverage_status")
        super().__init__(read_only=True, **kwargs)

    def to_representation(self, value) -> str:
        return CoverageStatus(value).label


class AssignmentSummarySerializer(serializers.Serializer):
    """A unit's or driver's period on a policy, as the vehicle and driver details show it."""

    assignment_id = serializers.IntegerField(source="id")
    policy_id = serializers.IntegerField()
    policy_number = serializers.CharField(source="policy.policy_number", allow_null=True)
    coverage_type = serializers.CharField(source="policy.coverage_type.code")
    coverage_type_name = serializers.CharField(source="policy.coverage_type.name")
    insurer_name = serializers.CharField(source="policy.insurer.name", allow_null=True)
    policy_status = serializers.SerializerMethodField()
    coverage_status = serializers.IntegerField()
    coverage_status_name = CoverageStatusNameField()
    policy_added_date = serializers.DateField(format=ISO)
    policy_removed_date = serializers.DateField(format=ISO, allow_null=True)
    covered = serializers.SerializerMethodField()

    def get_policy_status(self, coverage) -> str:
        return coverage.policy.status_on(context_date(self))

    def get_covered(self, coverage) -> bool:
        # The detail showing the periods has said whether their unit is live (set_context_unit).
        return coverage.covered_on(context_date(self), unit_live=self.context["unit_live"])


class LimitSerializer(ShapedSerializer):
    """A policy limit as verification and the certificate show it."""

    name = serializers.CharField()
    amount = MoneyField()

    @staticmethod
    def shape(limit) -> dict:
        """A `PolicyLimit` or a `LimitRow` (apps.coverages.selectors.attach_limit_rows)."""
        return {"name": limit.name, "amount": format_money(limit.amount)}
