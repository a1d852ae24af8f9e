"""The raw data of a premium report as JSON: what the API answers and what a snapshot freezes.

The selectors compute with Decimals and dates (apps/reports/prorata.py); these serializers are
the one place they become text. A snapshot stores their output, so a frozen report and a
computed one render through the same fields (text read back from a snapshot renders as is).
"""

from __future__ import annotations

from rest_framework import serializers

from apps.core.serializers import MoneyField, UtcDateTimeField

ISO = "iso-8601"


class FixedDataSerializer(serializers.Serializer):
    policy_id = serializers.IntegerField()
    policy_number = serializers.CharField(allow_null=True)
    insured = serializers.CharField()
    dot = serializers.CharField(allow_null=True)
    insurer = serializers.CharField(allow_null=True)
    naic = serializers.CharField(allow_null=True)
    coverage_type = serializers.CharField()
    coverage_type_name = serializers.CharField()
    effective_date = serializers.DateField(format=ISO)
    expiration_date = serializers.DateField(format=ISO)
    cancellation_date = serializers.DateField(format=ISO, allow_null=True)
    producer = serializers.CharField(allow_null=True)
    agency = serializers.CharField()
    period_start = serializers.DateField(format=ISO)
    period_end = serializers.DateField(format=ISO)
    policy_year_days = serializers.IntegerField()


class UnitTypeTotalSerializer(serializers.Serializer):
    unit_count = serializers.IntegerField()
    premium = MoneyField()


class PremiumMappingSerializer(serializers.Serializer):
    total_premium = MoneyField()
    earned_premium = MoneyField()
    unit_count = serializers.IntegerField()
    by_unit_type = serializers.DictField(child=UnitTypeTotalSerializer())


class TableRowSerializer(serializers.Serializer):
    vehicle_id = serializers.IntegerField()
    unit = serializers.CharField()
    model_year = serializers.IntegerField()
    make = serializers.CharField()
    vin = serializers.CharField()
    unit_type = serializers.CharField()
    stated_value = MoneyField(allow_null=True)
    annual_premium = MoneyField()
    policy_added_date = serializers.DateField(format=ISO)
    policy_removed_date = serializers.DateField(format=ISO, allow_null=True)
    days_on_policy = serializers.IntegerField()
    premium = MoneyField()


class ReportDataSerializer(serializers.Serializer):
    """fixedData, tableData and premiumMapping: the part a snapshot freezes."""

    fixed_data = FixedDataSerializer()
    table_data = TableRowSerializer(many=True)
    premium_mapping = PremiumMappingSerializer()


class RawDataSerializer(serializers.Serializer):
    """The raw-data answer: where the data comes from, then the report data."""

    report_id = serializers.IntegerField()
    source = serializers.ChoiceField(choices=["snapshot", "computed"])
    snapshot_at = UtcDateTimeField(allow_null=True)
    fixed_data = FixedDataSerializer()
    table_data = TableRowSerializer(many=True)
    premium_mapping = PremiumMappingSerializer()
