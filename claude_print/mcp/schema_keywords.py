"""Draft-07's keywords as Ajv groups them, and what both sides of the schema validator
use: the schema's own check (schema_meta) and the instance's (schema_check). Standard
library only, like them: the MCP server (mcp_structured) loads it at start."""

from __future__ import annotations

import math
import re
from typing import Any, Dict

JSON_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")

# Ajv's keyword groups, in its evaluation order. The first applies to any value; the
# others only when the value has the group's type.
GENERIC = ("$ref", "const", "enum", "not", "anyOf", "oneOf", "allOf", "if")
NUMBER = ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf")
STRING = ("maxLength", "minLength", "pattern", "format")
ARRAY = ("maxItems", "minItems", "uniqueItems", "additionalItems", "items", "contains")
OBJECT = (
    "maxProperties",
    "minProperties",
    "required",
    "propertyNames",
    "additionalProperties",
    "dependencies",
    "properties",
    "patternProperties",
)
GROUPS = (("number", NUMBER), ("string", STRING), ("array", ARRAY), ("object", OBJECT))


def resolve(root: Any, ref: str) -> Any:
    """A local reference (`#`, `#/definitions/x`, `#/$defs/x`); None when it is not one."""
    if not ref.startswith("#"):
        return None
    node = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_integer(value: Any) -> bool:
    return is_number(value) and float(value).is_integer()


def escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


_REGEX_CACHE: Dict[str, Any] = {}


def regex(pattern: str) -> Any:
    compiled = _REGEX_CACHE.get(pattern)
    if compiled is None:
        # JavaScript's \d is ASCII only; Python's matches any Unicode digit.
        compiled = _REGEX_CACHE[pattern] = re.compile(pattern.replace(r"\d", "[0-9]"))
    return compiled
