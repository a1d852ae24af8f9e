"""Vehicles (power units and trailers) and the lienholders that hold liens on them."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F
from django.db.models.functions import Upper
from simple_history.models import HistoricalRecords

from apps.core.identifiers import (
    PlateField,
    VinField,
    normalize_plate,
    normalize_vin,
    plate_key,
    plate_validator,
    vin_validator,
)
from apps.core.models import (
    AgencyScopedQuerySet,
    ClientAgencyMixin,
    ClientAgencyQuerySet,
    CopiedColumn,
    CopiedColumnsMixin,
    CopiedColumnsQuerySet,
    SoftDeleteQuerySet,
    TimeStampedModel,
    live_q,
)
from apps.vehicles.choices import VehicleStatus


class LienholderQuerySet(AgencyScopedQuerySet):
    agency_field = "agency"


class Lienholder(models.Model):
    """A bank or lessor holding a lien on vehicles; kept by agency staff."""

    agency = models.ForeignKey("agencies.Agency", on_delete=models.PROTECT, related_name="+")
    name = models.CharField(max_length=200)
    phone = models.CharField(max_length=40, blank=True)
    address = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = LienholderQuerySet.as_manager()

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


# A vehicle's copy of its make's name, the agency-wide list's `sort=make` column (see
# SORTABLE_LIVE_INDEXES); a renamed make spreads its new name (VehiclesConfig.ready).
MAKE_NAME = CopiedColumn("make", "name", "make_name")


class VehicleQuerySet(CopiedColumnsQuerySet, ClientAgencyQuerySet, SoftDeleteQuerySet):
    # The vehicle's own copy of its client's agency: the agency-wide list filters and sorts
    # through one index, (agency, column, id), instead of a join to the clients (issue 18).
    agency_field = "agency"

    def with_plate(self, key: str, state=None) -> VehicleQuerySet:
        """The units with this plate (its `plate_key`), of this state (a State or its id) when
        one is named: the one rule of a lookup by plate (verification, the certificate; the
        fleet batch, which reads its plates' units at once, applies it as `has_plate`)."""
        found = self.filter(license_plate_key=key)
        return found if state is None else found.filter(license_plate_state=state)


def has_plate(unit, key: str, state_id: int | None = None) -> bool:
    """`VehicleQuerySet.with_plate`'s rule for a unit already read (anything with
    `license_plate_key` and `license_plate_state_id`): its plate, and its state when one is
    named."""
    return unit.license_plate_key == key and (
        state_id is None or unit.license_plate_state_id == state_id
    )


# The agency-wide list's sortable columns, each with an index (agency, column, id) of the live
# units: page 1 and the last page (read backwards) walk one and stop after the page. Sorting by
# make sorts by the make's name, copied onto the vehicle (`make_name`): through the join to the
# makes PostgreSQL walked the makes in name order and sorted each make's units (10,000 a make in
# the bench's fleet, 5.6 ms for a page), where the copy's index gives the page (issue 18).
SORTABLE_LIVE_INDEXES = (
    ("unit", "unit_idx"),
    ("serial_number", "vin_sort_idx"),
    ("owner", "owner_idx"),
    ("garaging_address", "garaging_idx"),
    ("stated_value", "value_idx"),
    ("status", "status_idx"),
    ("client", "client_id_idx"),
    ("model_year", "year_idx"),
    ("license_plate", "plate_sort_idx"),
    ("make_name", "make_name_idx"),
    ("created_at", "created_idx"),
    ("updated_at", "updated_idx"),
)


class Vehicle(CopiedColumnsMixin, ClientAgencyMixin, TimeStampedModel):
    """A unit of a client's fleet, identified by its VIN (serial number)."""

    client = models.ForeignKey("clients.Client", on_delete=models.PROTECT, related_name="vehicles")
    # The client's agency, copied (`ClientAgencyMixin`): the one path agency scoping takes
    # (`VehicleQuerySet.agency_field`) and the first column of the list's sort indexes.
    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.PROTECT, related_name="+", editable=False
    )
    unit = models.CharField(max_length=40, help_text="The fleet's own unit number.")
    unit_type = models.ForeignKey("masterdata.UnitType", on_delete=models.PROTECT, related_name="+")
    model_year = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1900), MaxValueValidator(2100)]
    )
    make = models.ForeignKey("masterdata.Make", on_delete=models.PROTECT, related_name="+")
    # The make's name, copied (`MAKE_NAME`): the column `sort=make` orders by.
    make_name = models.CharField(max_length=120, default="", editable=False)
    serial_number = VinField("VIN", max_length=17, validators=[vin_validator])
    license_plate = PlateField(max_length=15, blank=True, validators=[plate_validator])
    license_plate_key = models.CharField(max_length=15, blank=True, editable=False)
    license_plate_state = models.ForeignKey(
        "masterdata.State", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    owner = models.CharField(max_length=200, blank=True)
    garaging_address = models.CharField(max_length=300, blank=True)
    stated_value = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    status = models.CharField(
        max_length=16, choices=VehicleStatus.choices, default=VehicleStatus.ACTIVE
    )
    lienholder = models.ForeignKey(
        Lienholder, null=True, blank=True, on_delete=models.SET_NULL, related_name="vehicles"
    )
    deleted = models.BooleanField(default=False, db_index=True)

    objects = VehicleQuerySet.as_manager()
    history = HistoricalRecords(excluded_fields=["updated_at", "make_name"])
    copied_columns = (MAKE_NAME,)
    # A second unit of the client with the VIN is an error of the VIN (the API answers 409).
    constraint_fields = {"vehicles_vehicle_unique_vin_per_client": "serial_number"}

    class Meta:
        ordering = ["unit", "id"]
        indexes = [
            models.Index(fields=["serial_number"], name="vehicles_vin_idx"),
            models.Index(fields=["license_plate_key"], name="vehicles_plate_idx"),
            models.Index(fields=["client", "unit"], name="vehicles_client_unit_idx"),
            # Serves a fleet's list in its default order, and its count, from the index alone.
            models.Index(
                fields=["client", "unit", "id"],
                condition=live_q(),
                name="vehicles_live_fleet_idx",
            ),
            # The agency-wide list (no client filter) in every sortable order (issue 18).
            *(
                models.Index(
                    fields=["agency", column, "id"],
                    condition=live_q(),
                    name=f"vehicles_agency_{short}",
                )
                for column, short in SORTABLE_LIVE_INDEXES
            ),
            models.Index(
                fields=["agency", "id"], condition=live_q(), name="vehicles_agency_id_idx"
            ),
            # Callers who see every agency (superusers): the default order only.
            models.Index(fields=["unit", "id"], condition=live_q(), name="vehicles_live_unit_idx"),
            # The agency-wide searches (issue 18): `unit=` ignores case (UPPER(unit) = UPPER(%s)),
            # `vin=` of fewer than 17 characters is a prefix (LIKE 'X%'), which a b-tree in the
            # database's collation cannot serve (only "C" can) and its pattern operator class
            # can. Each read the agency's 302,100 units: 57-125 ms for a count and a page. The
            # first is not partial: PostgreSQL estimates a condition on an expression from an
            # index's statistics only when that index is not partial, and without them expects
            # 1,511 of the agency's units to match and walks the list's order to find 25.
            models.Index(F("agency"), Upper("unit"), name="vehicles_agency_unit_ci_idx"),
            models.Index(
                fields=["agency", "serial_number"],
                opclasses=["int8_ops", "varchar_pattern_ops"],
                condition=live_q(),
                name="vehicles_agency_vin_prefix_idx",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["client", "serial_number"],
                name="%(app_label)s_%(class)s_unique_vin_per_client",
                violation_error_message=(
                    "This client already has a vehicle with VIN {serial_number}."
                ),
            )
        ]

    def __str__(self) -> str:
        return f"Unit {self.unit} ({self.serial_number})"

    def save(self, *args, **kwargs):
        self.serial_number = normalize_vin(self.serial_number or "")
        self.license_plate = normalize_plate(self.license_plate or "")
        self.license_plate_key = plate_key(self.license_plate)
        super().save(*args, **kwargs)  # the copy of the make's name follows the make
