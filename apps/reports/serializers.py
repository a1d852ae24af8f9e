"""The raw data of a premium report as JSON: what the API answers and what a snapshot freezes.

The selectors compute with Decimals and dates (apps/reports/prorata.py, the records of
apps/reports/selectors.py); these serializers are the one place they become text. A snapshot
stores ReportDataSerializer's output, so a frozen report renders as it was stored and a
computed one through the same fields.
"""

from __future__ import annotations

from collections.abc import Mapping

from rest_framework import serializers

from apps.core.camel_case import DataKeyed
from apps.core.serializers import DataKeyedDictField, MoneyField, UtcDateTimeField

ISO = "iso-8601"


class StoredAsIs:
    # A mapping here is a snapshot's part, read back from the JSON these serializers wrote:
    # it is shown as stored; a record (a report, a row, the totals) renders through the fields.
    # The stored keys are the fields' (snake_case, converted when rendered) and the data's as
    # they are, which a data-keyed field's mapping keeps, as when it was computed.
    def to_representation(self, instance):
        if isinstance(instance, Mapping):
            stored = dict(instance)
            for name, field in self.fields.items():
                if isinstance(field, DataKeyedDictField) and isinstance(stored.get(name), Mapping):
                    stored[name] = DataKeyed(stored[name])
            return stored
        return super().to_representation(instance)


class FixedDataSerializer(StoredAsIs, serializers.Serializer):
    # Read from the report: its policy, the policy's client, agency and insurer, its period.
    policy_id = serializers.IntegerField()
    policy_number = serializers.CharField(source="policy.policy_number", allow_null=True)
    insured = serializers.CharField(source="policy.client.client_name")
    dot = serializers.CharField(source="policy.client.dot", allow_null=True)
    insurer = serializers.CharField(source="policy.insurer.name", allow_null=True)
    naic = serializers.CharField(source="policy.insurer.naic", allow_null=True)
    coverage_type = serializers.CharField(source="policy.coverage_type.code")
    coverage_type_name = serializers.CharField(source="policy.coverage_type.name")
    effective_date = serializers.DateField(source="policy.effective_date", format=ISO)
    expiration_date = serializers.DateField(source="policy.expiration_date", format=ISO)
    cancellation_date = serializers.DateField(
        source="policy.cancellation_date", format=ISO, allow_null=True
    )
    producer = serializers.CharField(source="policy.producer.name", allow_null=True)
    # A snapshot's producer and agency are null to a viewer who does not act for the agency it
    # was frozen under (apps.reports.selectors.snapshot_shown_to).
    agency = serializers.CharField(source="policy.client.agency.name", allow_null=True)
    period_start = serializers.DateField(format=ISO)
    period_end = serializers.DateField(format=ISO)
    policy_year_days = serializers.IntegerField()


class UnitTypeTotalSerializer(serializers.Serializer):
    unit_count = serializers.IntegerField()
    premium = MoneyField()


class PremiumMappingSerializer(StoredAsIs, serializers.Serializer):
    total_premium = MoneyField()
    earned_premium = MoneyField()
    unit_count = serializers.IntegerField()
    by_unit_type = DataKeyedDictField(child=UnitTypeTotalSerializer())


class TableRowSerializer(StoredAsIs, serializers.Serializer):
    # A PremiumRow: the unit as it was scheduled, then its days and premium.
    vehicle_id = serializers.IntegerField(source="unit.vehicle_id")
    unit = serializers.CharField(source="unit.unit")
    model_year = serializers.IntegerField(source="unit.model_year")
    make = serializers.CharField(source="unit.make")
    vin = serializers.CharField(source="unit.vin")
    unit_type = serializers.CharField(source="unit.unit_type")
    stated_value = MoneyField(source="unit.stated_value", allow_null=True)
    annual_premium = MoneyField(source="unit.annual_premium")
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
    fixed_data = FixedDataSerializer(source="data.fixed_data")
    table_data = TableRowSerializer(source="data.table_data", many=True)
    premium_mapping = PremiumMappingSerializer(source="data.premium_mapping")
