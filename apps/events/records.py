"""The changed record as the API shows it, for an event's `data`."""

from __future__ import annotations

from typing import Any


def client_record(client) -> dict[str, Any]:
    from apps.clients.api.serializers import ClientSerializer

    return dict(ClientSerializer(client).data)


def policy_record(policy) -> dict[str, Any]:
    from apps.policies.api.serializers import PolicySerializer

    return dict(PolicySerializer(policy).data)


def vehicle_record(vehicle) -> dict[str, Any]:
    from apps.vehicles.api.serializers import VehicleSerializer

    return dict(VehicleSerializer(vehicle).data)


def assignment_record(assignment, field: str) -> dict[str, Any]:
    from apps.coverages.api.serializers import (
        DriverAssignmentSerializer,
        VehicleAssignmentSerializer,
    )

    serializer = VehicleAssignmentSerializer if field == "vehicle" else DriverAssignmentSerializer
    return dict(serializer(assignment).data)
