"""Money: amounts are Decimals inside the system and two-place decimal strings outside it.

Code computes with `Decimal` end to end; the one place an amount becomes text is
`format_money`, which `apps.core.serializers.MoneyField` (every money field of every response)
and the admin's import/export widget call; the printed certificate shows whole dollars through
`format_dollars`. Nothing formats money by hand.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
ZERO = Decimal("0.00")
# What an amount sent as text may look like (contract section 6: "125000.00"): ASCII digits,
# a sign, a point, spaces around. Python's Decimal also reads "1e6", "NaN", "1_000" and other
# scripts' digits (full-width ones), none of which an integrator means as money.
MONEY_TEXT = re.compile(r"\s*[-+]?[0-9]+(?:\.[0-9]+)?\s*")


def money_text(text: str) -> Decimal | None:
    """The amount `text` writes, or None when it is not plain decimal text; a negative zero
    is zero."""
    if MONEY_TEXT.fullmatch(text) is None:
        return None
    return Decimal(text.strip()) + 0


# An amount as a spreadsheet writes it when its column shows thousands separators: digits
# grouped in threes by commas, the first group one to three digits (1,234.50, 1,234,567). A
# fleet file's cell may be written so (apps.core.admin_import.MoneyWidget); a comma anywhere
# else (12,34, a decimal comma; 1,2345) groups nothing, and the text is judged as it is.
GROUPED_MONEY_TEXT = re.compile(r"\s*[-+]?[1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?\s*")


def ungrouped(text: str) -> str:
    """`text` without its thousands separators when they group its digits as 1,234,567.89
    does; any other text as it is (to be judged as money then, and refused)."""
    return text.replace(",", "") if GROUPED_MONEY_TEXT.fullmatch(text) else text


EXAMPLE_AMOUNT = "125000.00"  # contract section 6's example of money


def not_money_text_message(sent) -> str:
    """What a money field answers to a value that is not text (contract section 6: money is a
    decimal string): a JSON number, a boolean, a list... It names the string to send: the
    number sent, written as money, when that is exact (145000 -> "145000.00"), else the
    contract's example. "A valid number is required." read as if 145000 were not one."""
    example = EXAMPLE_AMOUNT
    if isinstance(sent, int | float) and not isinstance(sent, bool):
        amount = Decimal(str(sent))
        if amount.is_finite() and amount == amount.quantize(CENT) and abs(amount) < 10**12:
            example = format_money(amount)
    return f'Send money as a decimal string, e.g. "{example}".'


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
    """'$1,000,000': a limit as the printed ACORD 25 shows it, in whole dollars when it is
    whole, else with its cents ('$749,999.50'): rounded, it could print more cover than the
    policy has (the federal minimum for 749,999.50)."""
    if not isinstance(amount, Decimal):
        amount = Decimal(amount)
    if amount == amount.to_integral_value():
        return f"${amount:,.0f}"
    return f"${amount:,.2f}"
