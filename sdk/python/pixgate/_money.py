"""Exact money.

pixgate sends amounts as JSON numbers in reais with at most two decimals
(10, 10.5, 10.55). A float cannot hold most of them exactly, so this SDK
never makes one: requests take a decimal string ("10.50") or a Decimal
(centavos(1050) builds one from integer centavos), and answers are read with
json.loads(parse_float=Decimal), every money field a Decimal with two places.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Union

#: What a request accepts as money: reais text ("10.50") or a Decimal. Never a float or an int.
AmountInput = Union[str, Decimal]

#: Keys whose values are money in reais, in requests and answers.
MONEY_KEYS = frozenset(
    {"amount", "tax", "value", "price", "refunded_amount", "paid_amount", "amount_due_today", "returned_amount", "first_payment"}
)
#: Keys whose values are percentages (a due charge's fine, interest, discounts).
PERCENT_KEYS = frozenset({"percent", "percent_per_month"})

_CENT = Decimal("0.01")
_REAIS = re.compile(r"^-?\d+(\.\d+)?$")


def reais(text: str) -> Decimal:
    """Returns the amount written in reais with a dot and at most two decimals
    ("25.90", "10", "0.5") as a Decimal with two places. Extra decimals must be
    zeros ("1.500"); anything else raises ValueError: it never rounds."""
    if not isinstance(text, str) or not _REAIS.match(text):
        raise ValueError(f"pixgate: invalid amount {text!r}: want reais such as '25.90'")
    return _two_places(Decimal(text), text)


def centavos(n: int) -> Decimal:
    """Returns the amount of n integer centavos as a Decimal: centavos(2590) is Decimal('25.90')."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"pixgate: centavos must be an int, got {type(n).__name__}")
    return (Decimal(n) / 100).quantize(_CENT)


def to_centavos(amount: Decimal) -> int:
    """Returns a two-place Decimal amount as integer centavos."""
    return int(_two_places(amount, str(amount)) * 100)


def _two_places(d: Decimal, text: str) -> Decimal:
    try:
        q = d.quantize(_CENT)
    except InvalidOperation as e:
        raise ValueError(f"pixgate: amount {text!r} out of range") from e
    if q != d:
        raise ValueError(f"pixgate: amount {text!r} has more than two decimals")
    return q


def money_in(v: object, key: str) -> Decimal:
    """Turns request input at a money or percent key into a two-place Decimal, refusing floats and ints."""
    if isinstance(v, Decimal):
        if not v.is_finite():
            raise ValueError(f"pixgate: {key} is not a finite amount")
        return _two_places(v, str(v))
    if isinstance(v, str):
        return reais(v)
    raise TypeError(
        f"pixgate: {key} must be reais as a str ('10.50') or a Decimal (pixgate.centavos(1050)), "
        f"not {type(v).__name__}: a binary float cannot hold money exactly"
    )


def money_out(v: object, key: str) -> object:
    """Turns an answer's number at a money key (an int or a Decimal, as parsed) into a two-place Decimal."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, Decimal)):
        return _two_places(Decimal(v), str(v))
    return v


def json_number(d: Decimal) -> str:
    """The JSON number the API expects, without trailing zero decimals: 10, 10.5, 10.55."""
    s = format(d.quantize(_CENT), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s
