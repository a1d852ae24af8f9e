"""Reads of vehicles and lienholders; agency scoping is applied here."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import (
    Count,
    DecimalField,
    Exists,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce

from apps.core.history import history_for_user
from apps.coverages.models import DriverCoverage, VehicleCoverage
from apps.drivers.models import DriverVehicle
from apps.policies.models import Policy, PolicyRate
from apps.policies.rating import annual_unit_premium
from apps.vehicles.models import Lienholder, Vehicle

VEHICLE_RELATIONS = (
    "client",
    "unit_type",
    "make",
    "license_plate_state",
    "lienholder",
    "created_by",
    "updated_by",
)


def vehicle_queryset(*, user) -> QuerySet[Vehicle]:
    """Every vehicle the user may see, with what a list row shows."""
    return Vehicle.objects.for_user(user).select_related(*VEHICLE_RELATIONS)


def live_vehicles_naming(naming: Q) -> QuerySet[Vehicle]:
    """The live units of live clients that `naming` selects (those of a make renamed), in every
    agency, with what a list row shows, in id order: the records a change of a row they show
    announces (apps.events.records, `shows`). A deleted unit, or one of a deleted client, is
    not announced: verification does not find it, and its restoration's event carries it."""
    return (
        Vehicle.objects.live("client")
        .filter(naming)
        .select_related(*VEHICLE_RELATIONS)
        .order_by("id")
    )


def vehicle_detail_queryset(*, user) -> QuerySet[Vehicle]:
    """Vehicles with everything the detail shows, in a fixed number of queries."""
    return vehicle_queryset(user=user).prefetch_related(
        Prefetch(
            "coverages",
            queryset=VehicleCoverage.objects.select_related(
                "policy", "policy__coverage_type", "policy__insurer"
            ).order_by("policy_added_date", "id"),
        ),
        Prefetch(
            "coverages__policy__rates",
            queryset=PolicyRate.objects.select_related("unit_type"),
        ),
        Prefetch(
            "driver_links",
            queryset=DriverVehicle.objects.select_related("driver", "driver__client").order_by(
                "created_at", "id"
            ),
        ),
        Prefetch(
            "driver_links__driver__coverages",
            queryset=DriverCoverage.objects.select_related("policy", "policy__coverage_type"),
        ),
    )


@dataclass(frozen=True)
class UnitPremium:
    """What a unit costs a year on a policy it is scheduled on."""

    policy: Policy
    annual_premium: Decimal


def vehicle_premiums(vehicle: Vehicle, covering: list[VehicleCoverage]) -> list[UnitPremium]:
    """The unit's annual premium on each policy of the periods `covering` it on a day
    (apps.coverages.models.periods_covering), from the policy's rate for its unit type
    (prefetched by `vehicle_detail_queryset`: no query)."""
    policies = {c.policy_id: c.policy for c in covering}
    premiums = []
    for policy in policies.values():
        rate = next((r for r in policy.rates.all() if r.unit_type_id == vehicle.unit_type_id), None)
        premiums.append(UnitPremium(policy, annual_unit_premium(rate, vehicle.stated_value)))
    return premiums


def lienholder_detail(*, user, lienholder_id: int) -> Lienholder | None:
    """A lienholder with its totals, aggregated in the database, as attributes
    (`vehicle_total_count`, `vehicle_value_total`, `power_unit`, `non_power_unit`) and its
    live vehicles (`live_vehicles`); None when the user may not see it."""
    lienholder = (
        Lienholder.objects.for_user(user).select_related("agency").filter(pk=lienholder_id).first()
    )
    if lienholder is None:
        return None
    vehicles = (
        Vehicle.objects.for_user(user)
        .live("client")
        .filter(lienholder=lienholder)
        .select_related("make", "unit_type")
        .order_by("unit", "id")
    )
    totals = vehicles.aggregate(
        vehicle_total_count=Count("id"),
        vehicle_value_total=Coalesce(
            Sum("stated_value"),
            Value(0),
            output_field=DecimalField(max_digits=14, decimal_places=2),
        ),
        power_unit=Count("id", filter=Q(unit_type__is_power_unit=True)),
        non_power_unit=Count("id", filter=Q(unit_type__is_power_unit=False)),
    )
    for name, value in totals.items():
        setattr(lienholder, name, value)
    lienholder.live_vehicles = list(vehicles)
    return lienholder


def live_unit_ids(*, client_id: int) -> list[int]:
    """The ids of a client's live (not deleted) units, whose status follows the client's."""
    return list(Vehicle.objects.filter(client_id=client_id).live().values_list("pk", flat=True))


def vehicle_history(vehicle: Vehicle, *, user, newest: int | None = None) -> list:
    """The vehicle's audit records `user` may read, newest first (the newest `newest`, else
    all), each with the one before it to diff against (`history_for_user`: a unit that moved
    in is seen from the move on; its past, the old agency's staff and edits, is not). What
    the API's audit and the back-office summary both show."""
    versions = Vehicle.history.filter(id=vehicle.pk).select_related("history_user", "updated_by")
    return history_for_user(versions, user, newest=newest)


def policy_vehicle_queryset(*, policy) -> QuerySet[Vehicle]:
    """The vehicles scheduled on a policy (the caller has checked the policy is visible), each
    once, annotated with its latest period on it; deleted ones included, for the list's
    `deleted` filter to leave out or ask for (`PolicyVehicleFilterSet`)."""
    # Each vehicle once, joined to its latest period on the policy: the one no later period
    # (by added date, then id) follows. One filter() call, so the anti-join's OuterRefs use
    # the same join; ordered by the period's added date and the vehicle id, page 1 of a
    # 250,000-unit policy walks coverages_vpolicy_vehicle_idx and stops after 25 rows.
    added = OuterRef("coverages__policy_added_date")
    later = VehicleCoverage.objects.filter(policy=policy, vehicle=OuterRef("pk")).filter(
        Q(policy_added_date__gt=added)
        | Q(policy_added_date=added, id__gt=OuterRef("coverages__id"))
    )
    return (
        Vehicle.objects.filter(Q(coverages__policy=policy), ~Exists(later))
        .select_related(*VEHICLE_RELATIONS)
        .annotate(
            assignment_id=F("coverages__id"),
            coverage_status=F("coverages__coverage_status"),
            policy_added_date=F("coverages__policy_added_date"),
            policy_removed_date=F("coverages__policy_removed_date"),
        )
    )
