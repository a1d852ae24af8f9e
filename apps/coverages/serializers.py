"""Output shapes of coverage periods that other apps' responses and the admin pages embed.

They live outside `api/` because the vehicle and driver details and the back-office pages
render them too (no app imports another app's `api` package). The date the answer speaks for
is `context["on"]` (default: today in the service's time zone).
"""

from __future__ import annotations

import datetime as dt

from rest_framework import serializers

from apps.core.dates import today
from apps.core.money import format_money
from apps.core.serializers import MoneyField, ShapedSerializer
from apps.coverages.choices import CoverageStatus
from apps.coverages.models import periods_covering

ISO = "iso-8601"


def context_date(serializer: serializers.Field) -> dt.date:
    """The as-of date of a rendering, fixed once per response in the root's context."""
    return _on(serializer.context)


def _on(context: dict) -> dt.date:
    if "on" not in context:
        context["on"] = today()
    return context["on"]


def covering(context: dict, unit, periods=None) -> list:
    """The periods covering a vehicle or driver on the rendering's date (`periods_covering`),
    worked out once per unit per rendering, however many fields read it (a detail's `covered`,
    `coverageTypes` and billing, each period's `covered`, a driver's `verified`): kept in the
    rendering's context (the root's, which every nested serializer shares)."""
    known = context.setdefault("covering", {})
    key = (unit._meta.label, unit.pk)
    if key not in known:
        known[key] = periods_covering(unit, _on(context), periods)
    return known[key]


def set_context_unit(context: dict, unit, periods=None) -> None:
    """The vehicle or driver a rendering shows, whose periods' `covered` it says (`covering`;
    `periods`: as for `periods_covering`): set by the detail or page that renders them."""
    context["unit"] = unit
    covering(context, unit, periods)


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
        # The detail showing the periods has said whose they are (set_context_unit).
        return coverage in covering(self.context, self.context["unit"])


class LimitSerializer(ShapedSerializer):
    """A policy limit as verification and the certificate show it."""

    name = serializers.CharField()
    amount = MoneyField()

    @staticmethod
    def shape(limit) -> dict:
        """A `PolicyLimit` or a `LimitRow` (apps.coverages.selectors.attach_limit_rows)."""
        return {"name": limit.name, "amount": format_money(limit.amount)}
