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

Standard library only and cheap to import: the MCP server (mcp_structured) loads it
at start.
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from claude_print.jsjson import js_number
from claude_print.jsjson import to_js_json as js_json

MISMATCH_PREFIX = "Output does not match required schema: "
ENUM_SHOWN = 300  # characters of allowed values shown after an enum/const error
NAME_SHOWN = 80  # characters of an additional property's name
JSON_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")

# Ajv's keyword groups, in its evaluation order. The first applies to any value; the
# others only when the value has the group's type.
_GENERIC = ("$ref", "const", "enum", "not", "anyOf", "oneOf", "allOf", "if")
_NUMBER = ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf")
_STRING = ("maxLength", "minLength", "pattern", "format")
_ARRAY = ("maxItems", "minItems", "uniqueItems", "additionalItems", "items", "contains")
_OBJECT = (
    "maxProperties",
    "minProperties",
    "required",
    "propertyNames",
    "additionalProperties",
    "dependencies",
    "properties",
    "patternProperties",
)
_GROUPS = (("number", _NUMBER), ("string", _STRING), ("array", _ARRAY), ("object", _OBJECT))
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


# --- the schema itself --------------------------------------------------------------

_SCHEMA_VALUED = ("not", "if", "then", "else", "propertyNames", "contains")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs")
# Every keyword Ajv 8 knows for draft-07 (core, validation, applicator, format,
# metadata, content): any other one is `strict mode: unknown keyword`.
KNOWN_KEYWORDS = frozenset(
    (
        *("$schema", "$id", "$defs", "$vocabulary", "$comment", "definitions", "$ref"),
        *_GENERIC[1:],
        *_NUMBER,
        *_STRING,
        *_ARRAY,
        *_OBJECT,
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
        if value is not None and not (_is_integer(value) and value >= 0):
            return (
                f"data{where}/{key} must be integer"
                if not _is_integer(value)
                else (f"data{where}/{key} must be >= 0")
            )
    for key in ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"):
        if key in node and not _is_number(node[key]):
            return f"data{where}/{key} must be number"
    if "multipleOf" in node and not (_is_number(node["multipleOf"]) and node["multipleOf"] > 0):
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
                problem = _check_node(sub, f"{where}/{key}/{_escape(name)}", root)
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
                return f"data{where}/dependencies/{_escape(name)} must be array"
        else:
            problem = _check_node(dep, f"{where}/dependencies/{_escape(name)}", root)
            if problem:
                return problem
    ref = node.get("$ref")
    if ref is not None:
        if not isinstance(ref, str):
            return f"data{where}/$ref must be string"
        if _resolve(root, ref) is None:
            return f"can't resolve reference {ref} from id #"
    return None


def _check_pattern(pattern: Any, where: str) -> Optional[str]:
    if not isinstance(pattern, str):
        return f"data{where} must be string"
    try:
        _regex(pattern)
    except re.error as exc:
        return f"Invalid regular expression: /{pattern}/: {exc}"
    return None


_MISSING = object()


def _resolve(root: Any, ref: str) -> Any:
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


# --- values ---------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    return _is_number(value) and float(value).is_integer()


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
        return _is_number(value)
    if kind == "integer":
        return _is_integer(value)
    if kind == "string":
        return isinstance(value, str)
    return True


def equal(a: Any, b: Any) -> bool:
    """Deep equality as JavaScript's fast-deep-equal sees JSON (true is not 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _cut(text: str, limit: int) -> str:
    return text[:limit] + "\u2026" if len(text) > limit else text


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


_REGEX_CACHE: Dict[str, Any] = {}


def _regex(pattern: str) -> Any:
    compiled = _REGEX_CACHE.get(pattern)
    if compiled is None:
        # JavaScript's \d is ASCII only; Python's matches any Unicode digit.
        compiled = _REGEX_CACHE[pattern] = re.compile(pattern.replace(r"\d", "[0-9]"))
    return compiled


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
            group_type == name and any(k in schema for k in keys) for name, keys in _GROUPS
        )
        # Ajv checks the type first, unless it is one group's type with keywords in the
        # schema: then the type error comes at that group's place.
        if types and not in_group and not any(has_type(value, t) for t in types):
            errors.append(Error(path, "type", f"must be {','.join(types)}"))
        for keyword in _GENERIC:
            if keyword in schema:
                getattr(self, "_" + keyword.lstrip("$"))(schema, value, path, errors)
        for name, keywords in _GROUPS:
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
        target = _resolve(self.root, str(schema["$ref"]))
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
        if not _regex(schema["pattern"]).search(value):
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
            if name in known or any(_regex(p).search(name) for p in patterns):
                continue
            if extra is False:
                detail = f" ('{_cut(name, NAME_SHOWN)}' is not allowed)"
                message = "must NOT have additional properties"
                errors.append(Error(path, "additionalProperties", message, detail))
            else:
                self.check(extra, value[name], f"{path}/{_escape(name)}", errors)

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
                self.check(sub, value[name], f"{path}/{_escape(name)}", errors)

    def _patternProperties(
        self, schema: Dict[str, Any], value: Any, path: str, errors: List[Error]
    ) -> None:
        for pattern, sub in schema["patternProperties"].items():
            for name in value:
                if _regex(pattern).search(name):
                    self.check(sub, value[name], f"{path}/{_escape(name)}", errors)


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
