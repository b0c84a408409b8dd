"""JavaScript's JSON.stringify in Python: what `claude -p` prints is Node's JSON, so
numbers and strings must come out the way Node writes them. Standard library only and
cheap to import (the --json-schema MCP server uses it too)."""

from __future__ import annotations

import json
import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _js_string(text: str) -> str:
    # JSON.stringify keeps non-ASCII as is but escapes lone surrogates.
    out = json.dumps(text, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def js_number(value: float) -> str:
    """JavaScript's Number-to-string (what JSON.stringify prints for a number):
    `3`, `0.1`, `1e-7`, `1e+21`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if abs(value) < 10**21 else js_number(float(value))
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value == 0:
        return "0"
    if float(value).is_integer() and abs(value) < 2**53:  # exact: repr would say "100.0"
        return str(int(value))
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    sign = "-" if value < 0 else ""
    count = len(digits)
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exp = point - 1
    head = digits[0] + ("." + digits[1:] if count > 1 else "")
    return f"{sign}{head}e{'+' if exp >= 0 else '-'}{abs(exp)}"


def to_js_json(value: Any) -> str:
    """Compact JSON exactly as JavaScript's JSON.stringify writes it."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, dict):
        items = (f"{_js_string(str(k))}:{to_js_json(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(to_js_json(v) for v in value) + "]"
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
