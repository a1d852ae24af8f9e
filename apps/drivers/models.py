"""Drivers of a client, and which vehicles they drive."""

from __future__ import annotations

from django.db import models
from django.db.models import F
from django.db.models.functions import Lower
from simple_history.models import HistoricalRecords

from apps.core.identifiers import NormalizedCharField
from apps.core.models import (
    AgencyScopedQuerySet,
    ClientAgencyMixin,
    ClientAgencyQuerySet,
    ConstraintRulesMixin,
    CopiedColumn,
    CopiedColumnsMixin,
    CopiedColumnsQuerySet,
    TimeStampedModel,
    user_stamp,
)
from apps.drivers.choices import DriverStatus


def normalize_license_number(value: str) -> str:
    """A driver's licence number as stored and compared: trimmed, upper case (tx123 is TX123),
    whoever writes it (the API, the admin, a fleet file) and whoever looks it up."""
    return value.strip().upper()


class LicenseNumberField(NormalizedCharField):
    """A licence number, validated and compared as stored (`normalize_license_number`)."""

    normalize = staticmethod(normalize_license_number)


# A driver's copy of its licence state's USPS code, its sort column (see SORT_INDEXES).
LICENSE_STATE_CODE = CopiedColumn("license_state", "code", "license_state_code")


class DriverQuerySet(CopiedColumnsQuerySet, ClientAgencyQuerySet):
    """Scoped through the driver's own copy of its client's agency: the agency-wide list filters
    and sorts through one index, (agency, column, id), not a join to the clients (issue 18)."""


# The list's orders, each with an index (agency, columns..., id): page 1 and the last page (read
# backwards) walk one and stop after the page. The default order (last name, first name) serves
# `sort=lastName` too, each last name's drivers sorted by id as they come (incremental sort).
# `sort=licenseState` orders by the state's code, copied onto the driver (`license_state_code`):
# through the join to the states no index could give the order, so it sorted every driver of the
# agency (1.85x slower on the big fleet than on the small one, issue 18).
SORT_INDEXES = (
    (("last_name", "first_name"), "name_idx"),
    (("first_name",), "first_idx"),
    (("client",), "client_idx"),
    (("status",), "status_idx"),
    (("license_number",), "licence_idx"),
    (("license_state_code",), "lstate_idx"),
    (("hire_date",), "hired_idx"),
    (("created_at",), "created_idx"),
    (("updated_at",), "updated_idx"),
    ((), "id_idx"),
)


class Driver(CopiedColumnsMixin, ClientAgencyMixin, TimeStampedModel):
    """A driver of a client's fleet."""

    client = models.ForeignKey("clients.Client", on_delete=models.PROTECT, related_name="drivers")
    # The client's agency, copied (`ClientAgencyMixin`): the one path agency scoping takes and
    # the first column of the list's sort indexes; (agency, id) is its index.
    agency = models.ForeignKey(
        "agencies.Agency",
        on_delete=models.PROTECT,
        related_name="+",
        editable=False,
        db_index=False,
    )
    first_name = models.CharField(max_length=100)
    last_name = models.CharField(max_length=100)
    driver_type = models.ForeignKey(
        "masterdata.DriverType", on_delete=models.PROTECT, related_name="+"
    )
    date_of_birth = models.DateField(null=True, blank=True)
    hire_date = models.DateField(null=True, blank=True)
    license_number = LicenseNumberField(max_length=40, blank=True, db_index=True)
    license_state = models.ForeignKey(
        "masterdata.State", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # The licence state's USPS code, copied by save() (null without a state, where the join gave
    # null too: the same order): the column `sort=licenseState` walks in its index. The states
    # are the fixed USPS list (read-only in the admin, and masterdata_update refuses a new code),
    # so a copied code never goes stale.
    license_state_code = models.CharField(max_length=2, null=True, blank=True, editable=False)
    license_expiration_date = models.DateField(null=True, blank=True)
    dl_type = models.ForeignKey(
        "masterdata.LicenseType", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    address = models.CharField(max_length=300, blank=True)
    state = models.ForeignKey(
        "masterdata.State", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    city = models.ForeignKey(
        "masterdata.City", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    zip_code = models.CharField(max_length=10, blank=True)
    phone = models.CharField(max_length=40, blank=True)
    email = models.EmailField(blank=True)
    status = models.CharField(max_length=12, choices=DriverStatus.choices, default="ACTIVE")

    objects = DriverQuerySet.as_manager()
    history = HistoricalRecords(excluded_fields=["updated_at", "license_state_code"])
    copied_columns = (LICENSE_STATE_CODE,)

    class Meta:
        ordering = ["last_name", "first_name", "id"]
        indexes = [
            models.Index(fields=["client", "last_name"], name="drivers_client_name_idx"),
            *(
                models.Index(fields=["agency", *columns, "id"], name=f"drivers_agency_{short}")
                for columns, short in SORT_INDEXES
            ),
            # The API's orders by name, ignoring case (apps.core.sorting.IgnoringCase); the
            # admin's list keeps the column's own order (name_idx, first_idx).
            models.Index(
                F("agency"),
                Lower("last_name"),
                Lower("first_name"),
                F("id"),
                name="drivers_agency_name_ci_idx",
            ),
            models.Index(
                F("agency"), Lower("first_name"), F("id"), name="drivers_agency_first_ci_idx"
            ),
        ]

    def save(self, *args, **kwargs) -> None:
        # Stored once in its normal form, whoever writes (the services, an import, a raw ORM
        # write), as a client's DOT is (`Client.save`): the `licenseNumber` filter finds it.
        if self.license_number:
            self.license_number = normalize_license_number(self.license_number)
        super().save(*args, **kwargs)  # the copy of the licence state's code follows the state

    def __str__(self) -> str:
        return f"{self.first_name} {self.last_name}"


class DriverVehicleQuerySet(AgencyScopedQuerySet):
    agency_field = "driver__agency"


class DriverVehicle(ConstraintRulesMixin, models.Model):
    """A driver is associated with (drives) a vehicle of the same client."""

    driver = models.ForeignKey(Driver, on_delete=models.CASCADE, related_name="vehicle_links")
    vehicle = models.ForeignKey(
        "vehicles.Vehicle", on_delete=models.CASCADE, related_name="driver_links"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = user_stamp()

    objects = DriverVehicleQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["driver", "vehicle"],
                name="%(app_label)s_%(class)s_unique_pair",
                violation_error_message="The driver is already associated with this vehicle.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.driver} → {self.vehicle}"
