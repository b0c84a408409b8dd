"""The schema itself, checked as Ajv 8 checks a draft-07 schema before it validates
anything with it (its meta-schema and strict mode), in Ajv's words where they are known.
It checks what the validator (schema_check) relies on, not the whole meta-schema.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from claude_print.mcp.schema_keywords import (
    ARRAY,
    GENERIC,
    JSON_TYPES,
    NUMBER,
    OBJECT,
    STRING,
    escape,
    is_integer,
    is_number,
    regex,
    resolve,
)

_SCHEMA_VALUED = ("not", "if", "then", "else", "propertyNames", "contains")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs")
# Every keyword Ajv 8 knows for draft-07 (core, validation, applicator, format,
# metadata, content): any other one is `strict mode: unknown keyword`.
KNOWN_KEYWORDS = frozenset(
    (
        *("$schema", "$id", "$defs", "$vocabulary", "$comment", "definitions", "$ref"),
        *GENERIC[1:],
        *NUMBER,
        *STRING,
        *ARRAY,
        *OBJECT,
        *("type", "nullable", "then", "else", "title", "description", "default", "deprecated"),
        *("readOnly", "writeOnly", "examples", "contentMediaType", "contentEncoding"),
        "contentSchema",
    )
)
_COUNTS = (
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
)


def check_schema(schema: Any) -> Optional[str]:
    """Why `schema` cannot be used (in Ajv's meta-schema words where they are known), or
    None. Checks what the validator relies on, not the whole draft-07 meta-schema."""
    return _check_node(schema, "", schema)


def _check_node(node: Any, where: str, root: Any) -> Optional[str]:
    if isinstance(node, bool):
        return None
    if not isinstance(node, dict):
        return f"data{where} must be object,boolean"
    unknown = next((k for k in node if k not in KNOWN_KEYWORDS), None)
    if unknown is not None:
        return f'strict mode: unknown keyword: "{unknown}"'
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    if not isinstance(kind, (str, list, type(None))) or not all(k in JSON_TYPES for k in kinds):
        return (
            f"data{where}/type must be equal to one of the allowed values, data{where}/type "
            f"must be array, data{where}/type must match a schema in anyOf"
        )
    for key in _COUNTS:
        value = node.get(key)
        if value is not None and not (is_integer(value) and value >= 0):
            return (
                f"data{where}/{key} must be integer"
                if not is_integer(value)
                else (f"data{where}/{key} must be >= 0")
            )
    for key in ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"):
        if key in node and not is_number(node[key]):
            return f"data{where}/{key} must be number"
    if "multipleOf" in node and not (is_number(node["multipleOf"]) and node["multipleOf"] > 0):
        return f"data{where}/multipleOf must be > 0"
    required = node.get("required", [])
    if not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
        return f"data{where}/required must be array"
    if "enum" in node and not isinstance(node["enum"], list):
        return f"data{where}/enum must be array"
    if "pattern" in node:
        problem = _check_pattern(node["pattern"], f"{where}/pattern")
        if problem:
            return problem
    for key in (*_SCHEMA_VALUED, "additionalProperties", "additionalItems"):
        if key in node:
            problem = _check_node(node[key], f"{where}/{key}", root)
            if problem:
                return problem
    for key in _SCHEMA_LISTS:
        if key in node:
            value = node[key]
            if not isinstance(value, list) or not value:
                return f"data{where}/{key} must be array"
            for i, sub in enumerate(value):
                problem = _check_node(sub, f"{where}/{key}/{i}", root)
                if problem:
                    return problem
    for key in _SCHEMA_MAPS:
        if key in node:
            value = node[key]
            if not isinstance(value, dict):
                return f"data{where}/{key} must be object"
            for name, sub in value.items():
                if key == "patternProperties":
                    problem = _check_pattern(name, f"{where}/{key}")
                    if problem:
                        return problem
                problem = _check_node(sub, f"{where}/{key}/{escape(name)}", root)
                if problem:
                    return problem
    items = node.get("items")
    for i, sub in enumerate(
        items if isinstance(items, list) else [items] if "items" in node else []
    ):
        suffix = f"/items/{i}" if isinstance(items, list) else "/items"
        problem = _check_node(sub, where + suffix, root)
        if problem:
            return problem
    dependencies = node.get("dependencies", {})
    if not isinstance(dependencies, dict):
        return f"data{where}/dependencies must be object"
    for name, dep in dependencies.items():
        if isinstance(dep, list):
            if not all(isinstance(d, str) for d in dep):
                return f"data{where}/dependencies/{escape(name)} must be array"
        else:
            problem = _check_node(dep, f"{where}/dependencies/{escape(name)}", root)
            if problem:
                return problem
    ref = node.get("$ref")
    if ref is not None:
        if not isinstance(ref, str):
            return f"data{where}/$ref must be string"
        if resolve(root, ref) is None:
            return f"can't resolve reference {ref} from id #"
    return None


def _check_pattern(pattern: Any, where: str) -> Optional[str]:
    if not isinstance(pattern, str):
        return f"data{where} must be string"
    try:
        regex(pattern)
    except re.error as exc:
        return f"Invalid regular expression: /{pattern}/: {exc}"
    return None
