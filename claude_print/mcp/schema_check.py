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
import operator
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

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
    """Walks the schema and the instance together; the keywords' checks are `KEYWORDS`."""

    def __init__(self, root: Any) -> None:
        self.root = root  # what `$ref` resolves against

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
                KEYWORDS[keyword](self, schema, value, path, errors)
        for name, keywords in GROUPS:
            if not any(k in schema for k in keywords):
                continue
            if has_type(value, name):
                for keyword in keywords:
                    if keyword in schema and keyword != "format":
                        KEYWORDS[keyword](self, schema, value, path, errors)
            elif in_group and group_type == name:
                errors.append(Error(path, "type", f"must be {name}"))


# --- the keywords -------------------------------------------------------------------
# One function per keyword (one factory per family of limits), all with the same
# arguments: the checker (the applicators check subschemas with it, the others leave it),
# the schema holding the keyword, the value, its path, and the errors to add to. `check`
# calls them in Ajv's order (schema_keywords' groups), a type's group only on a value of it.

Schema = Dict[str, Any]
Keyword = Callable[[_Checker, Schema, Any, str, List[Error]], None]


# generic keywords


def _ref(checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    target = resolve(checker.root, str(schema["$ref"]))
    checker.check(target, value, path, errors)


def _const(_: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    if not equal(value, schema["const"]):
        shown = _cut(js_json(schema["const"]), ENUM_SHOWN)
        errors.append(Error(path, "const", "must be equal to constant", f": {shown}"))


def _enum(_: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    allowed = schema["enum"]
    if not any(equal(value, a) for a in allowed):
        shown = _cut(js_json(allowed), ENUM_SHOWN)
        message = "must be equal to one of the allowed values"
        errors.append(Error(path, "enum", message, f": {shown}"))


def _not(checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    if checker.valid(schema["not"], value, path)[0]:
        errors.append(Error(path, "not", "must NOT be valid"))


def _any_of(checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    collected: List[Error] = []
    for sub in schema["anyOf"]:
        ok, found = checker.valid(sub, value, path)
        if ok:
            return
        collected += found
    errors += collected
    errors.append(Error(path, "anyOf", "must match a schema in anyOf"))


def _one_of(checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    collected: List[Error] = []
    passing = 0
    for sub in schema["oneOf"]:
        ok, found = checker.valid(sub, value, path)
        passing += ok
        collected += found
    if passing != 1:
        errors += collected
        errors.append(Error(path, "oneOf", "must match exactly one schema in oneOf"))


def _all_of(checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    for sub in schema["allOf"]:
        checker.check(sub, value, path, errors)


def _if(checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    branch = "then" if checker.valid(schema["if"], value, path)[0] else "else"
    if branch in schema:
        ok, found = checker.valid(schema[branch], value, path)
        if not ok:
            errors += found
            errors.append(Error(path, "if", f'must match "{branch}" schema'))


# limits: numbers' bounds; strings' lengths, arrays' and objects' counts


def _bound(keyword: str, sign: str, holds: Callable[[Any, Any], bool]) -> Keyword:
    """maximum, minimum, exclusiveMaximum, exclusiveMinimum: `value <sign> limit`."""

    def check(_: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
        limit = schema[keyword]
        if not holds(value, limit):
            errors.append(Error(path, keyword, f"must be {sign} {js_number(limit)}"))

    return check


def _count(keyword: str, things: str) -> Keyword:
    """maxLength, minLength, maxItems, minItems, maxProperties, minProperties: len(value)."""
    most = keyword.startswith("max")

    def check(_: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
        limit = schema[keyword]
        if (len(value) > limit) if most else (len(value) < limit):
            message = f"must NOT have {'more' if most else 'fewer'} than {limit} {things}"
            errors.append(Error(path, keyword, message, f" (got {len(value)})"))

    return check


def _multiple_of(_: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    divisor = schema["multipleOf"]
    ratio = value / divisor if divisor else math.nan
    # Ajv with multipleOfPrecision 6: Math.round(ratio) within 1e-6 of the ratio.
    if not (math.isfinite(ratio) and abs(math.floor(ratio + 0.5) - ratio) <= 1e-6):
        errors.append(Error(path, "multipleOf", f"must be multiple of {js_number(divisor)}"))


# strings


def _pattern(_: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    if not regex(schema["pattern"]).search(value):
        errors.append(Error(path, "pattern", f'must match pattern "{schema["pattern"]}"'))


# arrays


def _unique_items(_: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
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
        message = f"must NOT have duplicate items (items ## {pair[0]} and {pair[1]} are identical)"
        errors.append(Error(path, "uniqueItems", message))


def _additional_items(
    checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]
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
            checker.check(extra, value[i], f"{path}/{i}", errors)


def _items(checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    items = schema["items"]
    if isinstance(items, list):
        for i, sub in enumerate(items[: len(value)]):
            checker.check(sub, value[i], f"{path}/{i}", errors)
    else:
        for i, item in enumerate(value):
            checker.check(items, item, f"{path}/{i}", errors)


def _contains(
    checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]
) -> None:
    collected: List[Error] = []
    for i, item in enumerate(value):
        ok, found = checker.valid(schema["contains"], item, f"{path}/{i}")
        if ok:
            return
        collected += found
    errors += collected
    errors.append(Error(path, "contains", "must contain at least 1 valid item(s)"))


# objects


def _required(_: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]) -> None:
    for name in schema["required"]:
        if name not in value:
            errors.append(Error(path, "required", f"must have required property '{name}'"))


def _property_names(
    checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]
) -> None:
    for name in value:
        ok, found = checker.valid(schema["propertyNames"], name, path)
        if not ok:
            errors += found
            errors.append(Error(path, "propertyNames", "property name must be valid"))


def _additional_properties(
    checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]
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
            checker.check(extra, value[name], f"{path}/{escape(name)}", errors)


def _dependencies(
    checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]
) -> None:
    for name, dependency in schema["dependencies"].items():
        if name not in value:
            continue
        if isinstance(dependency, list):
            word = "property" if len(dependency) == 1 else "properties"
            for needed in dependency:
                if needed not in value:
                    message = (
                        f"must have {word} {', '.join(dependency)} when property {name} is present"
                    )
                    errors.append(Error(path, "dependencies", message))
        else:
            checker.check(dependency, value, path, errors)


def _properties(
    checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]
) -> None:
    for name, sub in schema["properties"].items():
        if name in value:
            checker.check(sub, value[name], f"{path}/{escape(name)}", errors)


def _pattern_properties(
    checker: _Checker, schema: Schema, value: Any, path: str, errors: List[Error]
) -> None:
    for pattern, sub in schema["patternProperties"].items():
        for name in value:
            if regex(pattern).search(name):
                checker.check(sub, value[name], f"{path}/{escape(name)}", errors)


# Every keyword of schema_keywords' GENERIC and GROUPS but "format" (not checked).
KEYWORDS: Dict[str, Keyword] = {
    "$ref": _ref,
    "const": _const,
    "enum": _enum,
    "not": _not,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "allOf": _all_of,
    "if": _if,
    "maximum": _bound("maximum", "<=", operator.le),
    "minimum": _bound("minimum", ">=", operator.ge),
    "exclusiveMaximum": _bound("exclusiveMaximum", "<", operator.lt),
    "exclusiveMinimum": _bound("exclusiveMinimum", ">", operator.gt),
    "multipleOf": _multiple_of,
    "maxLength": _count("maxLength", "characters"),
    "minLength": _count("minLength", "characters"),
    "pattern": _pattern,
    "maxItems": _count("maxItems", "items"),
    "minItems": _count("minItems", "items"),
    "uniqueItems": _unique_items,
    "additionalItems": _additional_items,
    "items": _items,
    "contains": _contains,
    "maxProperties": _count("maxProperties", "properties"),
    "minProperties": _count("minProperties", "properties"),
    "required": _required,
    "propertyNames": _property_names,
    "additionalProperties": _additional_properties,
    "dependencies": _dependencies,
    "properties": _properties,
    "patternProperties": _pattern_properties,
}


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
