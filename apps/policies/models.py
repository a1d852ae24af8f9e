"""Policies, their limits and their rating."""

from __future__ import annotations

import datetime as dt

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Case, F, Q, Value, When
from django.db.models.functions import Upper
from django.db.models.lookups import Exact
from simple_history.models import HistoricalRecords

from apps.core.identifiers import printable_validator
from apps.core.models import (
    AgencyScopedQuerySet,
    ClientAgencyMixin,
    ClientAgencyQuerySet,
    SoftDeleteMixin,
    SoftDeleteQuerySet,
    TimeStampedModel,
    live_q,
)
from apps.policies.choices import CoveredAutos, LimitName, PolicyStatus


class PolicyQuerySet(ClientAgencyQuerySet, SoftDeleteQuerySet):
    # The policy's own copy of its client's agency (`ClientAgencyMixin`): the agency's list
    # reads an (agency, column, id) index instead of joining the clients and sorting them all.
    agency_field = "agency"

    def in_force_on(self, on: dt.date) -> PolicyQuerySet:
        """Live and ACTIVE on D (`in_force_q`)."""
        return self.filter(in_force_q(on))

    def not_ended_on(self, on: dt.date) -> PolicyQuerySet:
        """ACTIVE or FUTURE on D: in force, or starting later (`not_ended_q`)."""
        return self.filter(not_ended_q(on))

    def with_status(self, on: dt.date) -> PolicyQuerySet:
        return self.annotate(status=status_expression(on))

    def expiring_within(self, on: dt.date, days: int) -> PolicyQuerySet:
        """In force on D and expiring within `days` days of it: policies that will expire
        (`will_expire_q`), so not one cancelled effective on or before its expiration."""
        return self.in_force_on(on).filter(
            will_expire_q(), expiration_date__lte=on + dt.timedelta(days=days)
        )


# The status of a policy on a date, and what follows from it, each written once: the Python form
# (for a loaded policy, or the dates of a `.values()` row) beside the SQL form (to filter, sort
# and annotate). tests/policies/test_status_rule.py runs both on a grid of dates.


def policy_status(
    on: dt.date,
    *,
    effective_date: dt.date,
    expiration_date: dt.date,
    cancellation_date: dt.date | None,
) -> PolicyStatus:
    """CANCELLED from the cancellation date, FUTURE before the effective date, EXPIRED from the
    expiration date, ACTIVE in between (SQL: `status_expression`)."""
    if cancellation_date is not None and cancellation_date <= on:
        return PolicyStatus.CANCELLED
    if effective_date > on:
        return PolicyStatus.FUTURE
    if expiration_date <= on:
        return PolicyStatus.EXPIRED
    return PolicyStatus.ACTIVE


def status_expression(on: dt.date | F, prefix: str = "") -> Case:
    """`policy_status` as SQL, so it can be filtered and sorted on."""
    return Case(
        When(
            **{f"{prefix}cancellation_date__isnull": False, f"{prefix}cancellation_date__lte": on},
            then=Value(PolicyStatus.CANCELLED.value),
        ),
        When(**{f"{prefix}effective_date__gt": on}, then=Value(PolicyStatus.FUTURE.value)),
        When(**{f"{prefix}expiration_date__lte": on}, then=Value(PolicyStatus.EXPIRED.value)),
        default=Value(PolicyStatus.ACTIVE.value),
        output_field=models.CharField(),
    )


def policy_will_expire(
    *, effective_date: dt.date, expiration_date: dt.date, cancellation_date: dt.date | None
) -> bool:
    """Whether the policy ends by expiring: its status on its expiration date is EXPIRED. One
    cancelled effective on or before that date ends by its cancellation and never expires
    (SQL: `will_expire_q`; `PolicyTerm.will_expire`)."""
    status = policy_status(
        expiration_date,
        effective_date=effective_date,
        expiration_date=expiration_date,
        cancellation_date=cancellation_date,
    )
    return status == PolicyStatus.EXPIRED


def will_expire_q(prefix: str = "") -> Q:
    """`policy_will_expire` as SQL: the status on its own expiration date
    (`status_expression`)."""
    on_expiration = status_expression(F(f"{prefix}expiration_date"), prefix)
    return Q(Exact(on_expiration, Value(PolicyStatus.EXPIRED.value)))


def in_term_q(on: dt.date, prefix: str = "") -> Q:
    """D inside the term, effective <= D < expiration (Python: `Policy.in_term`)."""
    return Q(**{f"{prefix}effective_date__lte": on, f"{prefix}expiration_date__gt": on})


def not_ended_q(on: dt.date, prefix: str = "") -> Q:
    """Status ACTIVE or FUTURE on D: not cancelled on or before D, expiring after D."""
    return (
        Q(**{f"{prefix}cancellation_date__isnull": True})
        | Q(**{f"{prefix}cancellation_date__gt": on})
    ) & Q(**{f"{prefix}expiration_date__gt": on})


def in_force_q(on: dt.date, prefix: str = "") -> Q:
    """Live and ACTIVE on D (Python: `Policy.in_force_on`); `prefix` reaches the policy from a
    related model (`"policy__"`)."""
    return live_q(prefix.removesuffix("__")) & not_ended_q(on, prefix) & in_term_q(on, prefix)


def policy_number_key(number="policy_number") -> Upper:
    """The form in which two policy numbers are one number: upper case, as the `policy` filter
    matches them (iexact). The live policies of an agency and insurer differ in it (the unique
    constraint below); `number` is the column, or an outer reference to another policy's."""
    return Upper(number)


class PolicyTerm:
    """A policy's status on a date and what follows from it, for anything that has its dates
    and `deleted`: the `Policy` model, and the value rows verification reads
    (apps.coverages.rows.PolicyRow), so the rule is written once for both."""

    __slots__ = ()

    def status_on(self, on: dt.date) -> PolicyStatus:
        """The policy's status on D (`policy_status`)."""
        return policy_status(
            on,
            effective_date=self.effective_date,
            expiration_date=self.expiration_date,
            cancellation_date=self.cancellation_date,
        )

    def in_force_on(self, on: dt.date) -> bool:
        """Live and ACTIVE on D (SQL: `in_force_q`)."""
        return not self.deleted and self.status_on(on) == PolicyStatus.ACTIVE

    @property
    def will_expire(self) -> bool:
        """Ends by expiring, not by a cancellation on or before its expiration date
        (`policy_will_expire`)."""
        return policy_will_expire(
            effective_date=self.effective_date,
            expiration_date=self.expiration_date,
            cancellation_date=self.cancellation_date,
        )

    def in_term(self, on: dt.date) -> bool:
        """D inside the term, cancellation aside (SQL: `in_term_q`)."""
        return self.effective_date <= on < self.expiration_date

    def schedulable_on(self, on: dt.date) -> bool:
        """D a unit or driver may be scheduled from: a day the policy can cover, from its
        effective date to the day before it ends (`ends_on`: a cancellation that comes first
        ends it); a period starting later would never cover a day."""
        return self.effective_date <= on < self.ends_on

    @property
    def ends_on(self) -> dt.date:
        """The first day out of force: the expiration, or a cancellation that comes first
        (`policy_status`: CANCELLED from the cancellation date, EXPIRED from the expiration)."""
        cancelled = self.cancellation_date
        if cancelled is not None and cancelled < self.expiration_date:
            return cancelled
        return self.expiration_date


class Policy(PolicyTerm, ClientAgencyMixin, SoftDeleteMixin, TimeStampedModel):
    """An insurance policy of a client, for one line of coverage."""

    client = models.ForeignKey("clients.Client", on_delete=models.PROTECT, related_name="policies")
    # The client's agency, copied (`ClientAgencyMixin`) so that "a policy number is unique per
    # insurer among the live policies of ONE agency" is a database constraint: a unique index
    # holds under concurrent writers on PostgreSQL and SQLite alike, where a check-then-insert in
    # the service would race, and a lock on the client would not stop two clients of one agency
    # from taking the same number.
    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.PROTECT, related_name="+", editable=False
    )
    policy_number = models.CharField(
        max_length=60, null=True, blank=True, validators=[printable_validator]
    )
    coverage_type = models.ForeignKey(
        "masterdata.CoverageType", on_delete=models.PROTECT, related_name="+"
    )
    insurer = models.ForeignKey(
        "masterdata.Insurer",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="policies",
    )
    state = models.ForeignKey(
        "masterdata.State", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    producer = models.ForeignKey(
        "agencies.Producer", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    effective_date = models.DateField()
    expiration_date = models.DateField()
    cancellation_date = models.DateField(null=True, blank=True)
    premium = models.DecimalField(
        max_digits=14, decimal_places=2, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    additional_insured = models.BooleanField(default=False)
    subrogation_waived = models.BooleanField(default=False)
    covered_autos = models.CharField(
        max_length=12,
        choices=CoveredAutos.choices,
        blank=True,
        help_text="Auto liability: which autos the policy covers.",
    )
    description = models.TextField(blank=True)
    deleted = models.BooleanField(default=False, db_index=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = PolicyQuerySet.as_manager()
    history = HistoricalRecords(excluded_fields=["updated_at"])
    # The dates' order is the two CheckConstraints below; their errors name the later date.
    constraint_fields = {
        "policies_policy_expiration_after_effective": "expiration_date",
        "policies_policy_cancellation_not_before_effective": "cancellation_date",
    }

    class Meta:
        ordering = ["-effective_date", "id"]
        verbose_name_plural = "policies"
        indexes = [
            models.Index(
                fields=["client", "effective_date", "expiration_date"],
                name="policies_client_term_idx",
            ),
            models.Index(fields=["policy_number"], name="policies_number_idx"),
            # `?policy=` ignores case (UPPER(policy_number) = UPPER(%s)): without this index it
            # read all of an agency's policies (issue 18). Not partial, so PostgreSQL keeps
            # statistics of the expression and knows a number matches few policies.
            models.Index(F("agency"), Upper("policy_number"), name="policies_agency_number_ci_idx"),
            # The agency's list in its default order (newest first) and the sortable columns,
            # live policies only: page 1 and the last page (read backwards) stop after the page.
            *(
                models.Index(fields=["agency", *columns], condition=live_q(), name=name)
                for columns, name in (
                    (["-effective_date", "id"], "policies_agency_newest_idx"),
                    (["effective_date", "id"], "policies_agency_effective_idx"),
                    (["expiration_date", "id"], "policies_agency_expiration_idx"),
                    (["policy_number", "id"], "policies_agency_number_idx"),
                    (["client", "id"], "policies_agency_client_idx"),
                )
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(expiration_date__gt=F("effective_date")),
                name="%(app_label)s_%(class)s_expiration_after_effective",
                violation_error_message="Must be after the effective date.",
            ),
            models.CheckConstraint(
                condition=Q(cancellation_date__isnull=True)
                | Q(cancellation_date__gte=F("effective_date")),
                name="%(app_label)s_%(class)s_cancellation_not_before_effective",
                violation_error_message="Cannot precede the effective date.",
            ),
            # Whatever its case, as the `policy` filter finds a number (iexact): `gwc-al-1`
            # beside `GWC-AL-1` would be two policies the filter answers for one number. The
            # number keeps the spelling it was entered with.
            models.UniqueConstraint(
                F("agency"),
                F("insurer"),
                policy_number_key(),
                condition=live_q(),
                name="%(app_label)s_%(class)s_unique_live_number_ci_per_agency_insurer",
                violation_error_message=(
                    "A live policy numbered {policy_number} exists for this insurer in this agency."
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.coverage_type.code} {self.policy_number or '(unnumbered)'}"

    def limit_rows(self) -> list[PolicyLimit]:
        """Its limits in order (each with `name` and `amount`): the plain list a reader put in
        `prefetched_limits` (apps.coverages.selectors.attach_limit_rows, one query for many
        policies), else `limits.all()`."""
        rows = getattr(self, "prefetched_limits", None)
        return rows if rows is not None else list(self.limits.all())


class PolicyLimitQuerySet(AgencyScopedQuerySet):
    agency_field = "policy__agency"


class PolicyLimit(models.Model):
    """One limit of a policy, as printed on a certificate."""

    policy = models.ForeignKey(Policy, on_delete=models.CASCADE, related_name="limits")
    name = models.CharField(max_length=60, choices=LimitName.choices)
    amount = models.DecimalField(max_digits=14, decimal_places=2, validators=[MinValueValidator(0)])
    position = models.PositiveSmallIntegerField(default=0)

    objects = PolicyLimitQuerySet.as_manager()

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["policy", "name"],
                name="%(app_label)s_%(class)s_unique_name_per_policy",
                violation_error_message="This policy already has that limit.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.amount}"


class PolicyRateQuerySet(AgencyScopedQuerySet):
    agency_field = "policy__agency"


class PolicyRate(models.Model):
    """Rating of a policy for one unit type: annual rate, value rate, minimum premium."""

    policy = models.ForeignKey(Policy, on_delete=models.CASCADE, related_name="rates")
    unit_type = models.ForeignKey("masterdata.UnitType", on_delete=models.PROTECT, related_name="+")
    annual_rate = models.DecimalField(
        max_digits=12, decimal_places=2, default=0, help_text="Annual premium per unit."
    )
    rate_per_100_value = models.DecimalField(
        max_digits=8,
        decimal_places=4,
        default=0,
        help_text="Physical damage: annual premium per 100 dollars of stated value.",
    )
    minimum_premium = models.DecimalField(
        max_digits=12, decimal_places=2, default=0, help_text="Minimum annual premium per unit."
    )

    objects = PolicyRateQuerySet.as_manager()

    class Meta:
        ordering = ["policy", "unit_type__name"]
        constraints = [
            models.UniqueConstraint(
                fields=["policy", "unit_type"],
                name="%(app_label)s_%(class)s_unique_unit_type_per_policy",
                violation_error_message="This policy already has a rate for that unit type.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.policy} / {self.unit_type}"
