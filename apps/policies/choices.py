"""Policy statuses (derived, never stored) and the limits a certificate shows."""

from django.db import models


class PolicyStatus(models.TextChoices):
    FUTURE = "FUTURE"
    ACTIVE = "ACTIVE"
    EXPIRED = "EXPIRED"
    CANCELLED = "CANCELLED"


class CoveredAutos(models.TextChoices):
    ANY = "ANY", "Any auto"
    OWNED = "OWNED", "Owned autos only"
    SCHEDULED = "SCHEDULED", "Scheduled autos"
    HIRED = "HIRED", "Hired autos"
    NON_OWNED = "NON_OWNED", "Non-owned autos"


class LimitName(models.TextChoices):
    """The limit lines of the ACORD 25, by coverage."""

    EACH_OCCURRENCE = "Each Occurrence"
    DAMAGE_TO_RENTED_PREMISES = "Damage to Rented Premises"
    MEDICAL_EXPENSE = "Medical Expense"
    PERSONAL_ADV_INJURY = "Personal & Adv Injury"
    GENERAL_AGGREGATE = "General Aggregate"
    PRODUCTS_COMP_OP_AGG = "Products - Comp/Op Agg"
    COMBINED_SINGLE_LIMIT = "Combined Single Limit"
    BODILY_INJURY_PER_PERSON = "Bodily Injury (Per Person)"
    BODILY_INJURY_PER_ACCIDENT = "Bodily Injury (Per Accident)"
    PROPERTY_DAMAGE = "Property Damage"
    AGGREGATE = "Aggregate"
    RETENTION = "Retention"
    WC_EACH_ACCIDENT = "E.L. Each Accident"
    WC_DISEASE_EACH_EMPLOYEE = "E.L. Disease - Each Employee"
    WC_DISEASE_POLICY_LIMIT = "E.L. Disease - Policy Limit"
    CARGO_LIMIT = "Cargo Limit"
    PHYSICAL_DAMAGE_LIMIT = "Physical Damage (Stated Value)"
    DEDUCTIBLE = "Deductible"
    OCCUPATIONAL_ACCIDENT = "Occupational Accident"
