"""Money: amounts are Decimals inside the system and two-place decimal strings outside it.

Code computes with `Decimal` end to end; the one place an amount becomes text is
`format_money`, which `apps.core.serializers.MoneyField` (every money field of every response)
and the admin's import/export widget call; the printed certificate shows whole dollars through
`format_dollars`. Nothing formats money by hand.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
ZERO = Decimal("0.00")


def round_money(value: Decimal) -> Decimal:
    """Half-up to the cent, as premiums are rounded."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def format_money(amount: Decimal | str | int | None) -> str | None:
    """'1000000.00': an amount as the API and the exports show it (None stays None)."""
    if amount is None:
        return None
    if not isinstance(amount, Decimal):
        amount = Decimal(amount)
    return f"{amount:.2f}"


def format_dollars(amount: Decimal | str) -> str:
    """'$1,000,000': an amount in whole dollars, as the printed ACORD 25 shows limits."""
    if not isinstance(amount, Decimal):
        amount = Decimal(amount)
    return f"${amount:,.0f}"
