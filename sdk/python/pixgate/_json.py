"""JSON with exact money: parse_float=Decimal and a hook that gives every
money field two places on the way in; a small encoder on the way out that
writes Decimals as JSON numbers (json.dumps cannot) and refuses floats at
money keys."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, List, Tuple

from ._money import MONEY_KEYS, PERCENT_KEYS, json_number, money_in, money_out


def _pairs(pairs: List[Tuple[str, Any]]) -> dict:
    out = {}
    for k, v in pairs:
        out[k] = money_out(v, k) if k in MONEY_KEYS or k in PERCENT_KEYS else v
    return out


def decode(text: str) -> Any:
    """Parses an answer; numbers with a fraction are Decimals, money fields Decimals with two places."""
    return json.loads(text, parse_float=Decimal, object_pairs_hook=_pairs)


def encode(value: Any, key: str = "") -> str:
    """Writes a request body; money must be str or Decimal."""
    if (key in MONEY_KEYS or key in PERCENT_KEYS) and value is not None:
        return json_number(money_in(value, key))
    if isinstance(value, Decimal):
        return json_number(money_in(value, key or "value"))
    if value is None or isinstance(value, (bool, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        raise TypeError(f"pixgate: {key or 'a value'} is a float; send money as str or Decimal")
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if v is None:
                continue  # an unset optional field is left out, which the API reads as null
            parts.append(json.dumps(str(k), ensure_ascii=False) + ":" + encode(v, str(k)))
        return "{" + ",".join(parts) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(encode(v) for v in value) + "]"
    raise TypeError(f"pixgate: cannot encode {type(value).__name__} as JSON")
