"""Reads of drivers; agency scoping is applied here."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from apps.core.history import history_for_user
from apps.coverages.models import DriverCoverage
from apps.drivers.models import Driver, DriverVehicle


def driver_queryset(*, user) -> QuerySet[Driver]:
    return Driver.objects.for_user(user).select_related(
        "client",
        "driver_type",
        "license_state",
        "dl_type",
        "state",
        "city",
        "created_by",
        "updated_by",
    )


def driver_detail_queryset(*, user) -> QuerySet[Driver]:
    """Drivers with their vehicles and OA/DD coverage periods, in a fixed number of queries."""
    return driver_queryset(user=user).prefetch_related(
        Prefetch(
            "vehicle_links",
            queryset=DriverVehicle.objects.select_related("vehicle").order_by("created_at", "id"),
        ),
        Prefetch(
            "coverages",
            queryset=DriverCoverage.objects.select_related(
                "policy", "policy__coverage_type", "policy__insurer"
            ).order_by("policy_added_date", "id"),
        ),
    )


def driver_history(driver: Driver, *, user, newest: int | None = None) -> list:
    """The driver's audit records `user` may read, newest first (the newest `newest`, else
    all), each with the one before it to diff against (`history_for_user`: a driver whose
    client moved in is seen from the move on; its past, the old agency's staff and edits, is
    not)."""
    versions = Driver.history.filter(id=driver.pk).select_related("history_user", "updated_by")
    return history_for_user(versions, user, newest=newest)
