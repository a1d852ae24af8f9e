"""What a unit costs on a policy: annual premium from the policy's rates, and pro-rata."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def round_money(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def annual_unit_premium(rate, stated_value: Decimal | None) -> Decimal:
    """Annual premium of one unit: the per-unit rate plus the value rate, at least the minimum.

    `rate` is a PolicyRate or None (no rating for the unit type: no premium).
    """
    if rate is None:
        return Decimal("0.00")
    value = stated_value or Decimal("0")
    premium = rate.annual_rate + value / Decimal(100) * rate.rate_per_100_value
    return round_money(max(premium, rate.minimum_premium))
