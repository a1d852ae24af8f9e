"""Master data: the reference lists that writes name and responses echo."""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import ValidationError
from django.db import models

from apps.core.models import ConstraintRulesMixin


def name_key(name: str) -> str:
    """How a reference row is looked up and kept unique: its name, case and spaces ignored."""
    return name.strip().lower()


class NamedQuerySet(models.QuerySet):
    def by_name(self, name: str):
        return self.filter(name_key=name_key(name))


class NamedModel(ConstraintRulesMixin, models.Model):
    """Abstract: a reference row looked up by its name, case and spaces ignored."""

    name = models.CharField(max_length=120)
    name_key = models.CharField(max_length=120, editable=False, db_index=True)

    objects = NamedQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ["name"]
        # Each concrete list gets its own `<app>_<model>_unique_name` (City overrides it).
        constraints = [
            models.UniqueConstraint(
                fields=["name_key"],
                name="%(app_label)s_%(class)s_unique_name",
                violation_error_message="'{name}' is already on this list.",
            )
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        self.name_key = name_key(self.name)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        # Before the constraints are checked (full_clean), so uniqueness sees the new key.
        self.name_key = name_key(self.name or "")


class State(NamedModel):
    """A US state, DC or territory."""

    code = models.CharField(max_length=2, unique=True, help_text="USPS code.")
    is_territory = models.BooleanField(default=False)


class City(NamedModel):
    """A US city with a ZIP code, within its state."""

    state = models.ForeignKey(State, on_delete=models.CASCADE, related_name="cities")

    class Meta(NamedModel.Meta):
        verbose_name_plural = "cities"
        constraints = [
            models.UniqueConstraint(
                fields=["state", "name_key"],
                name="%(app_label)s_%(class)s_unique_per_state",
                violation_error_message="{state} already has a city named '{name}'.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name}, {self.state.code}" if self.state_id else self.name


def city_outside_state(city: City | None, state: State | None) -> str | None:
    """The rule of every postal address, written once: its city is one of its state's (a city
    needs its state). Why `city` breaks it, else None."""
    if city is None:
        return None
    if state is None:
        return "A city needs its state."
    if city.state_id != state.pk:
        return f"{city} is not in {state.name}."
    return None


def address_check(record, changes: Mapping, pairs=(("city", "state"),)) -> None:
    """Each (city field, state field) address of `record` that `changes` writes keeps its city in
    its state, as it will be: the fields changed, else the record's. A 400 on the city, or on
    the state when only the state changes (the stored city is not in the new one). An address
    the write leaves alone is not checked."""
    errors = {}
    for city_field, state_field in pairs:
        if city_field not in changes and state_field not in changes:
            continue
        city = changes.get(city_field, getattr(record, city_field))
        state = changes.get(state_field, getattr(record, state_field))
        message = city_outside_state(city, state)
        if message:
            errors[city_field if city_field in changes else state_field] = message
    if errors:
        raise ValidationError(errors)


class UnitType(NamedModel):
    """A kind of vehicle; power units pull, the others are pulled."""

    is_power_unit = models.BooleanField(default=True)


class Make(NamedModel):
    """A vehicle manufacturer."""

    class Meta(NamedModel.Meta):
        # The makes in name order, as their list and the admin show them. (The agency-wide
        # vehicle list sorted by make reads each vehicle's copy of its make's name since issue
        # 18's eighth stop: Vehicle.make_name.)
        indexes = [models.Index(fields=["name", "id"], name="masterdata_make_name_idx")]


class CoverageType(NamedModel):
    """A line of coverage (AL, APD, MTC…), and whether it schedules units or drivers."""

    code = models.CharField(max_length=10, unique=True)
    schedules_units = models.BooleanField(default=False)
    schedules_drivers = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.code} {self.name}"


class DriverType(NamedModel):
    """Owner Operator, Company Driver, Lease Operator."""


class LicenseType(NamedModel):
    """A driver's licence class."""


class ClientType(NamedModel):
    """Motor Carrier, Broker, Owner Operator."""


class AmBestRating(models.TextChoices):
    """AM Best financial strength ratings, best first (E, F and S are not ratings of strength:
    under supervision, in liquidation, suspended)."""

    A_PLUS_PLUS = "A++", "A++ (Superior)"
    A_PLUS = "A+", "A+ (Superior)"
    A = "A", "A (Excellent)"
    A_MINUS = "A-", "A- (Excellent)"
    B_PLUS_PLUS = "B++", "B++ (Good)"
    B_PLUS = "B+", "B+ (Good)"
    B = "B", "B (Fair)"
    B_MINUS = "B-", "B- (Fair)"
    C_PLUS_PLUS = "C++", "C++ (Marginal)"
    C_PLUS = "C+", "C+ (Marginal)"
    C = "C", "C (Weak)"
    C_MINUS = "C-", "C- (Weak)"
    D = "D", "D (Poor)"
    E = "E", "E (Under regulatory supervision)"
    F = "F", "F (In liquidation)"
    S = "S", "S (Suspended)"


# Best first: a lower index is a stronger insurer.
AM_BEST_ORDER = {value: index for index, value in enumerate(AmBestRating.values)}


class Insurer(NamedModel):
    """An insurance company, with its NAIC code and its AM Best rating."""

    naic = models.CharField("NAIC code", max_length=10, blank=True)
    address = models.CharField(max_length=300, blank=True)
    am_best_rating = models.CharField(
        "AM Best rating",
        max_length=3,
        choices=AmBestRating.choices,
        blank=True,
        help_text="Financial strength rating; blank when unknown (requirement checks then "
        "answer CAUTION).",
    )
