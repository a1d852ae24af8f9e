"""Verification status of many clients or units at once, by the rules verification applies.

A client is ACTIVE when it is live and one of its policies is in force on the day (what
`verify_clients` answers); a unit when it is live, its client is live and a period covers it
under a policy in force (what `verify_vehicles` answers). Two queries per call, whatever the
number of records.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from apps.clients.models import Client
from apps.coverages.models import VehicleCoverage
from apps.policies.models import Policy
from apps.vehicles.models import Vehicle

ACTIVE, INACTIVE = "ACTIVE", "INACTIVE"


def client_statuses(client_ids: Iterable[int], on: dt.date) -> dict[int, tuple[int, str]]:
    """{client id: (agency id, status)}."""
    ids = list(client_ids)
    in_force = set(
        Policy.objects.in_force_on(on).filter(client_id__in=ids).values_list("client_id", flat=True)
    )
    return {
        pk: (agency_id, ACTIVE if pk in in_force and not deleted else INACTIVE)
        for pk, agency_id, deleted in Client.objects.filter(pk__in=ids).values_list(
            "pk", "agency_id", "deleted"
        )
    }


def vehicle_statuses(vehicle_ids: Iterable[int], on: dt.date) -> dict[int, tuple[int, int, str]]:
    """{vehicle id: (agency id, client id, status)}."""
    ids = list(vehicle_ids)
    covered = set(
        VehicleCoverage.objects.filter(vehicle_id__in=ids)
        .in_force_on(on)
        .values_list("vehicle_id", flat=True)
    )
    rows = Vehicle.objects.filter(pk__in=ids).values_list(
        "pk", "client__agency_id", "client_id", "deleted", "client__deleted"
    )
    return {
        pk: (
            agency_id,
            client_id,
            ACTIVE if pk in covered and not deleted and not client_deleted else INACTIVE,
        )
        for pk, agency_id, client_id, deleted, client_deleted in rows
    }
