from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.permissions import HasPermissions
from apps.core.serializers import UtcDateTimeField
from apps.reports.selectors import report_queryset, report_raw_data


class UnitTypeTotalSerializer(serializers.Serializer):
    unit_count = serializers.IntegerField()
    premium = serializers.CharField()


class PremiumMappingSerializer(serializers.Serializer):
    total_premium = serializers.CharField()
    earned_premium = serializers.CharField()
    unit_count = serializers.IntegerField()
    by_unit_type = serializers.DictField(child=UnitTypeTotalSerializer())


class TableRowSerializer(serializers.Serializer):
    vehicle_id = serializers.IntegerField()
    unit = serializers.CharField()
    model_year = serializers.IntegerField()
    make = serializers.CharField()
    vin = serializers.CharField()
    unit_type = serializers.CharField()
    stated_value = serializers.CharField(allow_null=True)
    annual_premium = serializers.CharField()
    policy_added_date = serializers.DateField()
    policy_removed_date = serializers.DateField(allow_null=True)
    days_on_policy = serializers.IntegerField()
    premium = serializers.CharField()


class RawDataSerializer(serializers.Serializer):
    report_id = serializers.IntegerField()
    source = serializers.ChoiceField(choices=["snapshot", "computed"])
    snapshot_at = UtcDateTimeField(allow_null=True)
    fixed_data = serializers.DictField()
    table_data = TableRowSerializer(many=True)
    premium_mapping = PremiumMappingSerializer()


class ReportRawDataView(APIView):
    """The template mapping payload of a policy premium report."""

    permission_classes = [HasPermissions]
    required_permissions = ("reports.view_policypremiumreport",)

    @extend_schema(responses=RawDataSerializer, operation_id="reports_raw_data")
    def get(self, request, pk: int):
        report = report_queryset(user=request.user).filter(pk=pk).first()
        if report is None:
            raise NotFound("No premium report with this id.")
        data = report_raw_data(report)
        data["snapshot_at"] = UtcDateTimeField().to_representation(data["snapshot_at"])
        return Response(data)
