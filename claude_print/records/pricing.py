"""Best-effort cost and model limits, as `claude -p` reports them in `modelUsage`.

The interactive TUI's transcript records token usage but no cost, so
claude-print recomputes `total_cost_usd` / `costUSD` the way Claude Code
2.1.197 does (its price table and formula, read from the shipped bundle):

    cost = in/1e6*input + out/1e6*output + cache_read/1e6*cache_read_price
           + cache_write_cost + web_search_requests*web_search_price

evaluated in that order with IEEE doubles, one API call at a time, then summed
in call order (so 42+4 tokens on Opus 4.8 give 0.00030999999999999995 exactly
as `claude -p` prints). Known differences: an unknown model costs 0.0 here,
whereas Claude Code falls back to its default model's prices; organisation
price overrides (`additionalModelCostsCache`) and the
`CLAUDE_CODE_MAX_CONTEXT_TOKENS` / `DISABLE_COMPACT` overrides are ignored.
"""

from __future__ import annotations

import re
from typing import Any, Dict, NamedTuple, Optional, Tuple, Union


class Price(NamedTuple):
    """USD per million tokens (web search: USD per request)."""

    input: float
    output: float
    cache_write: float  # 5-minute cache writes
    cache_write_1h: float
    cache_read: float
    web_search: float


_HAIKU_35 = Price(0.8, 4, 1, 1.6, 0.08, 0.01)
_HAIKU_45 = Price(1, 5, 1.25, 2, 0.1, 0.01)
_SONNET = Price(3, 15, 3.75, 6, 0.3, 0.01)
_OPUS_4_0 = Price(15, 75, 18.75, 30, 1.5, 0.01)
_OPUS_4_5 = Price(5, 25, 6.25, 10, 0.5, 0.01)
_FABLE = Price(10, 50, 12.5, 20, 1, 0.01)  # also Opus 4.8 in fast mode
_OPUS_FAST = Price(30, 150, 37.5, 60, 3, 0.01)  # Opus 4.6 / 4.7 in fast mode

PRICES: Dict[str, Price] = {
    "claude-3-5-haiku": _HAIKU_35,
    "claude-haiku-4-5": _HAIKU_45,
    "claude-3-5-sonnet": _SONNET,
    "claude-3-7-sonnet": _SONNET,
    "claude-sonnet-4-0": _SONNET,
    "claude-sonnet-4-5": _SONNET,
    "claude-sonnet-4-6": _SONNET,
    "claude-sonnet-5": _SONNET,
    "claude-opus-4-0": _OPUS_4_0,
    "claude-opus-4-1": _OPUS_4_0,
    "claude-opus-4-5": _OPUS_4_5,
    "claude-opus-4-6": _OPUS_4_5,
    "claude-opus-4-7": _OPUS_4_5,
    "claude-opus-4-8": _OPUS_4_5,
    "claude-fable-5": _FABLE,
    "claude-mythos-5": _FABLE,
    # Default models of later releases, derived from their captured `claude -p` costs
    # (two runs of known token counts give the input and output prices; cache prices
    # assumed in the usual ratios). The TUI's own cost-state record wins where it exists.
    "claude-opus-5": _OPUS_4_5,  # 2.1.221: 42/4 tokens $0.00031, 84/15 $0.000795
    "claude-opus-5-5": Price(4, 20, 5, 8, 0.4, 0.01),  # 2.1.290: $0.000248, $0.000636
    "claude-sonnet-5-5": Price(2, 10, 2.5, 4, 0.2, 0.01),  # 2.1.330: 42/4 $0.000124
}

# Checked in this order, like Claude Code's canonical-name function: the
# first family whose marker occurs in the (lower-cased) model id wins.
_FAMILIES: Tuple[Tuple[Union[str, re.Pattern[str]], str], ...] = (
    ("claude-opus-5-5", "claude-opus-5-5"),
    ("claude-opus-5", "claude-opus-5"),
    ("claude-sonnet-5-5", "claude-sonnet-5-5"),
    ("claude-fable-5", "claude-fable-5"),
    ("claude-mythos-5", "claude-mythos-5"),
    ("claude-opus-4-8", "claude-opus-4-8"),
    ("claude-opus-4-7", "claude-opus-4-7"),
    ("claude-opus-4-6", "claude-opus-4-6"),
    ("claude-opus-4-5", "claude-opus-4-5"),
    ("claude-opus-4-1", "claude-opus-4-1"),
    (re.compile(r"claude-opus-4(?!-\d(?!\d))"), "claude-opus-4-0"),
    ("claude-sonnet-5", "claude-sonnet-5"),
    ("claude-sonnet-4-6", "claude-sonnet-4-6"),
    ("claude-sonnet-4-5", "claude-sonnet-4-5"),
    (re.compile(r"claude-sonnet-4(?!-\d(?!\d))"), "claude-sonnet-4-0"),
    ("claude-haiku-4-5", "claude-haiku-4-5"),
    ("claude-3-7-sonnet", "claude-3-7-sonnet"),
    ("claude-3-5-sonnet", "claude-3-5-sonnet"),
    ("claude-3-5-haiku", "claude-3-5-haiku"),
    ("claude-3-opus", "claude-3-opus"),
    ("claude-3-sonnet", "claude-3-sonnet"),
    ("claude-3-haiku", "claude-3-haiku"),
)

_NATIVE_1M = {
    "claude-opus-5",
    "claude-opus-5-5",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-sonnet-5",
    "claude-fable-5",
    "claude-mythos-5",
}

_MAX_OUTPUT: Dict[str, int] = {
    "claude-opus-5-5": 128000,
    "claude-sonnet-5-5": 128000,
    "claude-opus-5": 64000,
    "claude-fable-5": 64000,
    "claude-mythos-5": 64000,
    "claude-sonnet-5": 64000,
    "claude-opus-4-8": 64000,
    "claude-opus-4-7": 64000,
    "claude-opus-4-6": 64000,
    "claude-sonnet-4-6": 32000,
    "claude-opus-4-5": 32000,
    "claude-sonnet-4-0": 32000,
    "claude-sonnet-4-5": 32000,
    "claude-haiku-4-5": 32000,
    "claude-opus-4-1": 32000,
    "claude-opus-4-0": 32000,
    "claude-3-opus": 4096,
    "claude-3-sonnet": 8192,
    "claude-3-haiku": 4096,
    "claude-3-5-sonnet": 8192,
    "claude-3-5-haiku": 8192,
    "claude-3-7-sonnet": 32000,
}
_DEFAULT_MAX_OUTPUT = 32000
_DEFAULT_CONTEXT = 200_000


def canonical_model(model: str) -> str:
    """Family name of a model id: "claude-opus-4-8[1m]" -> "claude-opus-4-8".

    A family matches only where no minor version follows it: "claude-sonnet-5-5" is not
    "claude-sonnet-5" (a later model this table does not know), a dated
    "claude-sonnet-5-20260101" is.
    """
    lowered = model.lower()
    for marker, family in _FAMILIES:
        if isinstance(marker, str):
            if re.search(re.escape(marker) + r"(?!-\d(?!\d))", lowered):
                return family
        elif marker.search(lowered):
            return family
    return re.sub(r"-\d{8}$", "", lowered)


def price_for(model: str, usage: Optional[Dict[str, Any]] = None) -> Optional[Price]:
    family = canonical_model(model)
    if usage is not None and usage.get("speed") == "fast":
        if family == "claude-opus-4-8":
            return _FABLE
        if family in ("claude-opus-4-6", "claude-opus-4-7"):
            return _OPUS_FAST
    return PRICES.get(family)


def _num(value: Any) -> float:
    # JS `?? 0`: missing or null counts as zero; bools are not token counts.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value)  # exact for token counts (< 2**53)


def cost_usd(model: str, usage: Dict[str, Any]) -> float:
    """Cost of one API call, same formula and float evaluation order as Claude Code."""
    price = price_for(model, usage)
    if price is None:
        return 0.0
    cache_written = _num(usage.get("cache_creation_input_tokens"))
    cache_creation = usage.get("cache_creation")
    one_hour = (
        _num(cache_creation.get("ephemeral_1h_input_tokens"))
        if isinstance(cache_creation, dict)
        else 0
    )
    one_hour = min(one_hour, cache_written)
    if one_hour <= 0:
        write_cost = cache_written / 1e6 * price.cache_write
    else:
        write_cost = (
            one_hour / 1e6 * price.cache_write_1h
            + (cache_written - one_hour) / 1e6 * price.cache_write
        )
    server_tools = usage.get("server_tool_use")
    searches = (
        _num(server_tools.get("web_search_requests")) if isinstance(server_tools, dict) else 0
    )
    return float(
        _num(usage.get("input_tokens")) / 1e6 * price.input
        + _num(usage.get("output_tokens")) / 1e6 * price.output
        + _num(usage.get("cache_read_input_tokens")) / 1e6 * price.cache_read
        + write_cost
        + searches * price.web_search
    )


def context_window(model: str) -> int:
    """`contextWindow` in modelUsage: 1M for "[1m]" ids and natively-1M families."""
    if "[1m]" in model.lower() or canonical_model(model) in _NATIVE_1M:
        return 1_000_000
    return _DEFAULT_CONTEXT


def max_output_tokens(model: str) -> int:
    """`maxOutputTokens` in modelUsage: Claude Code's default output cap for the family."""
    return _MAX_OUTPUT.get(canonical_model(model), _DEFAULT_MAX_OUTPUT)
