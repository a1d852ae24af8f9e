"""Clients: the insured carriers, brokers and owner-operators of an agency."""

from __future__ import annotations

from django.db import models
from django.db.models import F
from django.db.models.functions import Length, Lower
from simple_history.models import HistoricalRecords

from apps.core.identifiers import DotField, dot_validator
from apps.core.models import SoftDeleteMixin, SoftDeleteQuerySet, TimeStampedModel, live_q


class CargoClass(models.TextChoices):
    """What a carrier hauls, as 49 CFR 387.9 sorts it for the minimum levels of financial
    responsibility."""

    GENERAL_FREIGHT = "GENERAL_FREIGHT", "General freight (non-hazardous)"
    OIL = "OIL", "Oil (listed in 49 CFR 172.101)"
    HAZMAT = "HAZMAT", "Hazardous materials (other than bulk)"
    HAZMAT_BULK = "HAZMAT_BULK", "Hazardous materials in bulk, explosives, gases, radioactive"


class ClientQuerySet(SoftDeleteQuerySet):
    agency_field = "agency"


class Client(SoftDeleteMixin, TimeStampedModel):
    """An insured (motor carrier, broker, owner-operator) of one agency."""

    agency = models.ForeignKey("agencies.Agency", on_delete=models.PROTECT, related_name="clients")
    producer = models.ForeignKey(
        "agencies.Producer",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="clients",
    )
    parent_client = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children"
    )
    client_name = models.CharField(max_length=200)
    dot = DotField("DOT number", max_length=8, null=True, blank=True, validators=[dot_validator])
    client_type = models.ForeignKey(
        "masterdata.ClientType", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    acord_enabled = models.BooleanField(default=True)
    cargo_class = models.CharField(
        max_length=16,
        choices=CargoClass.choices,
        default=CargoClass.GENERAL_FREIGHT,
        help_text="Sets the federal minimum of auto liability (49 CFR 387.9).",
    )
    address = models.CharField(max_length=300, blank=True)
    state = models.ForeignKey(
        "masterdata.State", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    city = models.ForeignKey(
        "masterdata.City", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    zip_code = models.CharField(max_length=10, blank=True)
    mailing_address = models.CharField(max_length=300, blank=True)
    mailing_state = models.ForeignKey(
        "masterdata.State", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    mailing_city = models.ForeignKey(
        "masterdata.City", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    mailing_zip_code = models.CharField(max_length=10, blank=True)
    phone = models.CharField(max_length=40, blank=True)
    email = models.EmailField(blank=True)
    deleted = models.BooleanField(default=False, db_index=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = ClientQuerySet.as_manager()
    history = HistoricalRecords(excluded_fields=["updated_at"])
    # A second live client with the DOT is an error of the DOT (the API still answers 409).
    constraint_fields = {"clients_client_unique_live_dot_per_agency": "dot"}

    class Meta:
        ordering = ["client_name", "id"]
        indexes = [
            models.Index(fields=["dot"], name="clients_client_dot_idx"),
            models.Index(fields=["agency", "client_name"], name="clients_client_agency_name_idx"),
            # The API's order by name, ignoring case (apps.core.sorting.IgnoringCase): page 1
            # and the last page of an agency's clients walk it and stop after the page.
            models.Index(
                F("agency"), Lower("client_name"), F("id"), name="clients_agency_name_ci_idx"
            ),
            # The API's order by DOT, as numbers (apps.core.sorting.AsNumber), of the live
            # clients the list shows unless asked for deleted ones.
            models.Index(
                F("agency"),
                Length("dot"),
                F("dot"),
                F("id"),
                condition=live_q(),
                name="clients_agency_dot_number_idx",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["agency", "dot"],
                condition=live_q(),
                name="%(app_label)s_%(class)s_unique_live_dot_per_agency",
                violation_error_message=(
                    "A live client with DOT {dot} already exists in this agency."
                ),
            )
        ]

    def save(self, *args, **kwargs) -> None:
        # Stored once in its normal form (contract section 13), whoever writes: the API, the
        # admin, an import. 01234567 and 1234567 are one carrier, so the unique-live-DOT
        # constraint sees them as equal and verification finds it either way.
        if self.dot:
            self.dot = DotField.normalize(self.dot)
        inserted = self.pk is None
        super().save(*args, **kwargs)
        # Policies, vehicles and drivers carry their client's agency (`ClientAgencyMixin`): a
        # client that moves takes them along. A new row has none yet (a client saved with a
        # given id may be an existing one, so only a save without an id skips the copy).
        update_fields = kwargs.get("update_fields")
        if not inserted and (update_fields is None or {"agency", "agency_id"} & {*update_fields}):
            for records in (self.policies, self.vehicles, self.drivers):
                records.exclude(agency_id=self.agency_id).update(agency_id=self.agency_id)

    def __str__(self) -> str:
        return f"{self.client_name} (DOT {self.dot})" if self.dot else self.client_name
