"""A small JSON Schema validator with the messages of Claude Code's StructuredOutput tool.

`claude -p --json-schema` checks the model's tool input with Ajv 8 (draft-07,
``allErrors: true``, ``validateFormats: false``, ``multipleOfPrecision: 6``) and
tells the model what is wrong in one tool_result line (measured on 2.1.197 and
2.1.330 against the fake API; the formatter is in the 2.1.330 bundle):

    Output does not match required schema: /a: must be integer, root: must have
    required property 'b'      (one line)

Every Ajv error becomes ``<instancePath or "root">: <message>``, joined by ``", "``,
in Ajv's evaluation order; some keywords add a detail: ``(got N)`` for the length and
count limits, ``('name' is not allowed)`` for an additional property, the allowed
values as JSON for ``enum``/``const`` (cut at 300 characters with an ellipsis).

Covered: type, enum, const, $ref (local: ``#``, ``#/definitions/...``, ``#/$defs/...``),
not, anyOf, oneOf, allOf, if/then/else, the number, string, array and object keywords
of draft-07 (maximum, minimum, exclusiveMaximum, exclusiveMinimum, multipleOf,
maxLength, minLength, pattern, maxItems, minItems, uniqueItems, items, additionalItems,
contains, maxProperties, minProperties, required, propertyNames, additionalProperties,
dependencies, properties, patternProperties) and boolean schemas. ``format`` is not
checked (neither does Claude Code). Patterns are Python regular expressions, which
agree with JavaScript's on the usual schema patterns.

The schema is checked first (schema_meta); the keyword groups and helpers both sides
use are schema_keywords. Standard library only and cheap to import: the MCP server
(mcp_structured) loads it at start.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from claude_print.jsjson import js_number
from claude_print.jsjson import to_js_json as js_json
from claude_print.mcp.schema_keywords import (
    GENERIC,
    GROUPS,
    escape,
    is_integer,
    is_number,
    regex,
    resolve,
)
from claude_print.mcp.schema_meta import check_schema

MISMATCH_PREFIX = "Output does not match required schema: "
ENUM_SHOWN = 300  # characters of allowed values shown after an enum/const error
NAME_SHOWN = 80  # characters of an additional property's name
_COMPARISONS = {"maximum": "<=", "minimum": ">=", "exclusiveMaximum": "<", "exclusiveMinimum": ">"}


class SchemaError(ValueError):
    """The schema itself is not usable (the message says where)."""


class Error(NamedTuple):
    """One Ajv error: where in the instance, which keyword, and the text the model sees."""

    path: str  # JSON pointer into the instance, "" for the root
    keyword: str
    message: str  # Ajv's own message
    detail: str = ""  # what Claude Code adds from 2.1.260 on: " (got 3)", ": [1,2]", ...

    def text(self, detailed: bool = True) -> str:
        return f"{self.path or 'root'}: {self.message}{self.detail if detailed else ''}"


def validate(schema: Any, instance: Any) -> List[Error]:
    """Every error of `instance` against `schema`, in Ajv's order ([] when it is valid).
    Raises SchemaError for a schema this module cannot apply."""
    problem = check_schema(schema)
    if problem is not None:
        raise SchemaError(problem)
    errors: List[Error] = []
    _Checker(schema).check(schema, instance, "", errors)
    return errors


def mismatch(schema: Any, instance: Any, detailed: bool = True) -> Optional[str]:
    """The StructuredOutput tool's error text for `instance`, or None when it is valid.
    `detailed`: with the details Claude Code adds from 2.1.260 on (2.1.248 and older
    print Ajv's messages alone)."""
    errors = validate(schema, instance)
    if not errors:
        return None
    return MISMATCH_PREFIX + ", ".join(e.text(detailed) for e in errors)


# --- values ---------------------------------------------------------------------------


def has_type(value: Any, kind: str) -> bool:
    """Ajv's type check of a JSON value (JavaScript has one number type: 1.0 is an integer)."""
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "number":
        return is_number(value)
    if kind == "integer":
        return is_integer(value)
    if kind == "string":
        return isinstance(value, str)
    return True


def equal(a: Any, b: Any) -> bool:
    """Deep equality as JavaScript's fast-deep-equal sees JSON (true is not 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) and is_number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _cut(text: str, limit: int) -> str:
    return text[:limit] + "\u2026" if len(text) > limit else text


def _js_key(value: Any, typed: bool) -> str:
    """The property key JavaScript makes of a scalar (uniqueItems' fast path)."""
    if isinstance(value, str):
        return value + "_" if typed else value
    return js_json(value)


# --- the checker ------------------------------------------------------------------


class _Checker:
    def __init__(self, root: Any) -> None:
        self.root = root

    def valid(self, schema: Any, value: Any, path: str) -> Tuple[bool, List[Error]]:
        errors: List[Error] = []
        self.check(schema, value, path, errors)
        return not errors, errors

    def check(self, schema: Any, value: Any, path: str, errors: List[Error]) -> None:
        if schema is True:
            return
        if schema is False:
            errors.append(Error(path, "false schema", "boolean schema is false"))
            return
        if not isinstance(schema, dict):
            return
        kind = schema.get("type")
        types: List[str] = (
            kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
        )
        group_type = types[0] if len(types) == 1 else None
        in_group = group_type is not None and any(
            group_type == name and any(k in schema for k in keys) for name, keys in GROUPS
        )
        # Ajv checks the type first, unless it is one group's type with keywords in the
        # schema: then the type error comes at that group's place.
        if types and not in_group and not any(has_type(value, t) for t in types):
            errors.append(Error(path, "type", f"must be {','.join(types)}"))
        for keyword in GENERIC:
            if keyword in schema:
                getattr(self, "_" + keyword.lstrip("$"))(schema, value, path, errors)
        for name, keywords in GROUPS:
            if not any(k in schema for k in keywords):
                continue
            if has_type(value, name):
                for keyword in keywords:
                    if keyword in schema and keyword != "format":
                        getattr(self, "_" + keyword)(schema, value, path, errors)
            elif in_group and group_type == name:
                errors.append(Error(path, "type", f"must be {name}"))

    # generic keywords

    def _ref(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        target = resolve(self.root, str(schema["$ref"]))
        self.check(target, value, path, errors)

    def _const(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        if not equal(value, schema["const"]):
            shown = _cut(js_json(schema["const"]), ENUM_SHOWN)
            errors.append(Error(path, "const", "must be equal to constant", f": {shown}"))

    def _enum(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        allowed = schema["enum"]
        if not any(equal(value, a) for a in allowed):
            shown = _cut(js_json(allowed), ENUM_SHOWN)
            message = "must be equal to one of the allowed values"
            errors.append(Error(path, "enum", message, f": {shown}"))

    def _not(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        if self.valid(schema["not"], value, path)[0]:
            errors.append(Error(path, "not", "must NOT be valid"))

    def _anyOf(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        collected: List[Error] = []
        for sub in schema["anyOf"]:
            ok, found = self.valid(sub, value, path)
            if ok:
                return
            collected += found
        errors += collected
        errors.append(Error(path, "anyOf", "must match a schema in anyOf"))

    def _oneOf(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        collected: List[Error] = []
        passing = 0
        for sub in schema["oneOf"]:
            ok, found = self.valid(sub, value, path)
            passing += ok
            collected += found
        if passing != 1:
            errors += collected
            errors.append(Error(path, "oneOf", "must match exactly one schema in oneOf"))

    def _allOf(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        for sub in schema["allOf"]:
            self.check(sub, value, path, errors)

    def _if(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        branch = "then" if self.valid(schema["if"], value, path)[0] else "else"
        if branch in schema:
            ok, found = self.valid(schema[branch], value, path)
            if not ok:
                errors += found
                errors.append(Error(path, "if", f'must match "{branch}" schema'))

    # numbers

    def _limit(self, keyword: str, schema: Dict[str, Any], value: Any) -> Optional[str]:
        limit = schema[keyword]
        ok = {
            "maximum": value <= limit,
            "minimum": value >= limit,
            "exclusiveMaximum": value < limit,
            "exclusiveMinimum": value > limit,
        }[keyword]
        return None if ok else f"must be {_COMPARISONS[keyword]} {js_number(limit)}"

    def _maximum(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        self._number_limit("maximum", schema, value, path, errors)

    def _minimum(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        self._number_limit("minimum", schema, value, path, errors)

    def _exclusiveMaximum(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        self._number_limit("exclusiveMaximum", schema, value, path, errors)

    def _exclusiveMinimum(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        self._number_limit("exclusiveMinimum", schema, value, path, errors)

    def _number_limit(
        self, keyword: str, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        message = self._limit(keyword, schema, value)
        if message:
            errors.append(Error(path, keyword, message))

    def _multipleOf(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        divisor = schema["multipleOf"]
        ratio = value / divisor if divisor else math.nan
        # Ajv with multipleOfPrecision 6: Math.round(ratio) within 1e-6 of the ratio.
        if not (math.isfinite(ratio) and abs(math.floor(ratio + 0.5) - ratio) <= 1e-6):
            errors.append(Error(path, "multipleOf", f"must be multiple of {js_number(divisor)}"))

    # strings

    def _maxLength(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        if len(value) > schema["maxLength"]:
            limit = schema["maxLength"]
            message = f"must NOT have more than {limit} characters"
            errors.append(Error(path, "maxLength", message, f" (got {len(value)})"))

    def _minLength(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        if len(value) < schema["minLength"]:
            limit = schema["minLength"]
            message = f"must NOT have fewer than {limit} characters"
            errors.append(Error(path, "minLength", message, f" (got {len(value)})"))

    def _pattern(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        if not regex(schema["pattern"]).search(value):
            errors.append(Error(path, "pattern", f'must match pattern "{schema["pattern"]}"'))

    # arrays

    def _maxItems(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        if len(value) > schema["maxItems"]:
            message = f"must NOT have more than {schema['maxItems']} items"
            errors.append(Error(path, "maxItems", message, f" (got {len(value)})"))

    def _minItems(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        if len(value) < schema["minItems"]:
            message = f"must NOT have fewer than {schema['minItems']} items"
            errors.append(Error(path, "minItems", message, f" (got {len(value)})"))

    def _uniqueItems(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        if schema["uniqueItems"] is not True or len(value) < 2:
            return
        items = schema.get("items")
        kind = items.get("type") if isinstance(items, dict) else None
        item_types = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
        pair: Optional[Tuple[int, int]] = None
        if item_types and not any(t in ("object", "array") for t in item_types):
            # Ajv's fast path: from the end, remember each item's index by its key.
            seen: Dict[str, int] = {}
            for i in range(len(value) - 1, -1, -1):
                item = value[i]
                if not any(has_type(item, t) for t in item_types):
                    continue
                key = _js_key(item, len(item_types) > 1)
                if key in seen:
                    pair = (seen[key], i)
                    break
                seen[key] = i
        else:
            for i in range(len(value) - 1, 0, -1):
                found = next((j for j in range(i - 1, -1, -1) if equal(value[i], value[j])), None)
                if found is not None:
                    pair = (found, i)
                    break
        if pair is not None:
            message = (
                f"must NOT have duplicate items (items ## {pair[0]} and {pair[1]} are identical)"
            )
            errors.append(Error(path, "uniqueItems", message))

    def _additionalItems(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        items = schema.get("items")
        if not isinstance(items, list):
            return
        extra = schema["additionalItems"]
        if extra is False and len(value) > len(items):
            message = f"must NOT have more than {len(items)} items"
            errors.append(Error(path, "additionalItems", message))
        elif isinstance(extra, dict):
            for i in range(len(items), len(value)):
                self.check(extra, value[i], f"{path}/{i}", errors)

    def _items(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        items = schema["items"]
        if isinstance(items, list):
            for i, sub in enumerate(items[: len(value)]):
                self.check(sub, value[i], f"{path}/{i}", errors)
        else:
            for i, item in enumerate(value):
                self.check(items, item, f"{path}/{i}", errors)

    def _contains(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        collected: List[Error] = []
        for i, item in enumerate(value):
            ok, found = self.valid(schema["contains"], item, f"{path}/{i}")
            if ok:
                return
            collected += found
        errors += collected
        errors.append(Error(path, "contains", "must contain at least 1 valid item(s)"))

    # objects

    def _maxProperties(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        limit = schema["maxProperties"]
        if len(value) > limit:
            message = f"must NOT have more than {limit} properties"
            errors.append(Error(path, "maxProperties", message, f" (got {len(value)})"))

    def _minProperties(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        limit = schema["minProperties"]
        if len(value) < limit:
            message = f"must NOT have fewer than {limit} properties"
            errors.append(Error(path, "minProperties", message, f" (got {len(value)})"))

    def _required(self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]) -> None:
        for name in schema["required"]:
            if name not in value:
                errors.append(Error(path, "required", f"must have required property '{name}'"))

    def _propertyNames(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        for name in value:
            ok, found = self.valid(schema["propertyNames"], name, path)
            if not ok:
                errors += found
                errors.append(Error(path, "propertyNames", "property name must be valid"))

    def _additionalProperties(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        extra = schema["additionalProperties"]
        if extra is True:
            return
        known = schema.get("properties")
        known = known if isinstance(known, dict) else {}
        patterns = schema.get("patternProperties")
        patterns = list(patterns) if isinstance(patterns, dict) else []
        for name in value:
            if name in known or any(regex(p).search(name) for p in patterns):
                continue
            if extra is False:
                detail = f" ('{_cut(name, NAME_SHOWN)}' is not allowed)"
                message = "must NOT have additional properties"
                errors.append(Error(path, "additionalProperties", message, detail))
            else:
                self.check(extra, value[name], f"{path}/{escape(name)}", errors)

    def _dependencies(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        for name, dependency in schema["dependencies"].items():
            if name not in value:
                continue
            if isinstance(dependency, list):
                word = "property" if len(dependency) == 1 else "properties"
                for needed in dependency:
                    if needed not in value:
                        message = (
                            f"must have {word} {', '.join(dependency)} when property "
                            f"{name} is present"
                        )
                        errors.append(Error(path, "dependencies", message))
            else:
                self.check(dependency, value, path, errors)

    def _properties(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        for name, sub in schema["properties"].items():
            if name in value:
                self.check(sub, value[name], f"{path}/{escape(name)}", errors)

    def _patternProperties(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        for pattern, sub in schema["patternProperties"].items():
            for name in value:
                if regex(pattern).search(name):
                    self.check(sub, value[name], f"{path}/{escape(name)}", errors)


__all__ = [
    "Error",
    "SchemaError",
    "check_schema",
    "equal",
    "has_type",
    "js_json",
    "mismatch",
    "validate",
]
