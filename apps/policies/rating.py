"""What a unit costs on a policy: annual premium from the policy's rates, and pro-rata."""

from __future__ import annotations

from decimal import Decimal

from apps.core.money import ZERO, round_money


def annual_unit_premium(rate, stated_value: Decimal | None) -> Decimal:
    """Annual premium of one unit: the per-unit rate plus the value rate, at least the minimum.

    `rate` is a PolicyRate or None (no rating for the unit type: no premium).
    """
    if rate is None:
        return ZERO
    value = stated_value or Decimal("0")
    premium = rate.annual_rate + value / Decimal(100) * rate.rate_per_100_value
    return round_money(max(premium, rate.minimum_premium))
