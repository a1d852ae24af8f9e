from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.permissions import HasPermissions
from apps.reports.selectors import report_queryset, report_raw_data
from apps.reports.serializers import RawDataSerializer


class ReportRawDataView(APIView):
    """The template mapping payload of a policy premium report."""

    permission_classes = [HasPermissions]
    required_permissions = ("reports.view_policypremiumreport",)

    @extend_schema(responses=RawDataSerializer, operation_id="reports_raw_data")
    def get(self, request, pk: int):
        report = report_queryset(user=request.user).filter(pk=pk).first()
        if report is None:
            raise NotFound("No premium report with this id.")
        return Response(RawDataSerializer(report_raw_data(report, user=request.user)).data)
