"""claude_print.mcp.schema_check: the StructuredOutput tool's validation, as `claude -p` does it.

The measured cases (tests/data/json-schema/) hold the tool_result text the real
`claude -p --json-schema` answered for each (schema, input) pair: 2.1.330 with Claude
Code's details, 2.1.197 with Ajv's plain messages.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest
from harness import TESTS

from claude_print.mcp import schema_check as sc
from claude_print.mcp.schema_keywords import GENERIC, GROUPS

DATA = TESTS / "data" / "json-schema"


def measured(release: str) -> List[Dict[str, Any]]:
    cases = json.loads((DATA / f"tool-errors-{release}.json").read_text())
    return [c for c in cases if c["tool_result"] is not None]


@pytest.mark.parametrize("case", measured("2.1.330"), ids=lambda c: c["name"])
def test_errors_read_like_claude_p_2_1_330(case: Dict[str, Any]) -> None:
    assert sc.mismatch(case["schema"], case["input"]) == case["tool_result"]


@pytest.mark.parametrize("case", measured("2.1.197"), ids=lambda c: c["name"])
def test_errors_read_like_claude_p_2_1_197(case: Dict[str, Any]) -> None:
    assert sc.mismatch(case["schema"], case["input"], detailed=False) == case["tool_result"]


def test_the_measured_inputs_pass_once_fixed() -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }
    assert sc.mismatch(schema, {"answer": 4}) is None
    assert sc.mismatch(schema, {"answer": 4.0}) is None, "JavaScript: 4.0 is an integer"
    assert sc.validate(schema, {"answer": 4}) == []


def test_one_line_per_error_with_root_for_the_top() -> None:
    text = sc.mismatch({"type": "object", "required": ["a"]}, {})
    assert text == "Output does not match required schema: root: must have required property 'a'"


@pytest.mark.parametrize(
    "schema, value, message",
    [
        ({"type": "boolean"}, 1, "root: must be boolean"),
        ({"type": "integer"}, True, "root: must be integer"),
        ({"type": "number"}, "1", "root: must be number"),
        ({"type": ["string", "null"]}, 1, "root: must be string,null"),
        ({"enum": [1, "a"]}, True, 'root: must be equal to one of the allowed values: [1,"a"]'),
        ({"const": 1}, True, "root: must be equal to constant: 1"),
        ({"const": 1.5}, 1.5, None),
        ({"multipleOf": 0.01}, 0.07, None),
        ({"multipleOf": 0.01}, 0.075, "root: must be multiple of 0.01"),
        ({"maximum": 1e-7}, 1, "root: must be <= 1e-7"),
        ({"type": "string", "maxLength": 1}, "😀", None),
        ({"pattern": "^[0-9]+$"}, "١٢", 'root: must match pattern "^[0-9]+$"'),
        ({"pattern": r"^\d+$"}, "١٢", 'root: must match pattern "^\\d+$"'),
        ({"items": {"type": "integer"}}, [1, "x"], "/1: must be integer"),
        ({"properties": {"a/b": {"type": "string"}}}, {"a/b": 1}, "/a~1b: must be string"),
        (
            {"uniqueItems": True},
            [1, 1.0],
            "root: must NOT have duplicate items (items ## 0 and 1 are identical)",
        ),
        ({"uniqueItems": True}, [1, True], None),
        (
            {"uniqueItems": True},
            [{"a": [1]}, {"a": [1]}],
            "root: must NOT have duplicate items (items ## 0 and 1 are identical)",
        ),
        (
            {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            None,
            "root: must be string, root: must be integer, "
            "root: must match exactly one schema in oneOf",
        ),
        (
            {"if": {"type": "string"}, "else": {"type": "integer"}},
            1.5,
            'root: must be integer, root: must match "else" schema',
        ),
        (
            {"$ref": "#/definitions/x", "definitions": {"x": {"type": "string"}}},
            1,
            "root: must be string",
        ),
        ({"additionalProperties": {"type": "integer"}}, {"k": "v"}, "/k: must be integer"),
        (
            {"dependencies": {"a": ["b", "c"]}},
            {"a": 1, "c": 2},
            "root: must have properties b, c when property a is present",
        ),
        (
            {"dependencies": {"a": {"required": ["z"]}}},
            {"a": 1},
            "root: must have required property 'z'",
        ),
        (
            {"additionalProperties": False},
            {"k" * 90: 1},
            "root: must NOT have additional properties ('" + "k" * 80 + "\u2026' is not allowed)",
        ),
        (True, {"anything": 1}, None),
        ({"properties": {"x": False}}, {"x": 1}, "/x: boolean schema is false"),
        ({"type": "string", "format": "email"}, "nope", None),
    ],
)
def test_keywords(schema: Any, value: Any, message: Any) -> None:
    found = sc.mismatch(schema, value)
    assert found == (None if message is None else sc.MISMATCH_PREFIX + message)


def test_enum_values_are_cut_at_300_characters() -> None:
    text = sc.mismatch({"enum": ["x" * 400]}, "y")
    assert text is not None and text.endswith('["' + "x" * 298 + "\u2026")


def test_type_error_comes_where_ajv_reports_it() -> None:
    # A type with keywords of its own group is checked in that group, after enum/const;
    # any other type first.
    number = {"type": "number", "minimum": 0, "enum": [1]}
    integer = {"type": "integer", "minimum": 0, "enum": [1]}
    assert [e.keyword for e in sc.validate(number, "x")] == ["enum", "type"]
    assert [e.keyword for e in sc.validate(integer, "x")] == ["type", "enum"]


@pytest.mark.parametrize(
    "schema, problem",
    [
        (
            {"type": "foo"},
            "data/type must be equal to one of the allowed values, data/type must be array, "
            "data/type must match a schema in anyOf",
        ),
        ({"type": "object", "foo": 1}, 'strict mode: unknown keyword: "foo"'),
        (
            {"properties": {"a": {"$ref": "#/definitions/nope"}}},
            "can't resolve reference #/definitions/nope from id #",
        ),
        ({"properties": {"a": {"type": "string", "pattern": "("}}}, "Invalid regular expression"),
        ({"required": "a"}, "data/required must be array"),
        ({"minLength": -1}, "data/minLength must be >= 0"),
        ({"anyOf": []}, "data/anyOf must be array"),
        ({"properties": {"a": 3}}, "data/properties/a must be object,boolean"),
    ],
)
def test_unusable_schemas_are_named(schema: Dict[str, Any], problem: str) -> None:
    found = sc.check_schema(schema)
    assert found is not None and found.startswith(problem), found
    with pytest.raises(sc.SchemaError):
        sc.validate(schema, {})


@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"type": "object", "properties": {}, "additionalProperties": False},
        {"$schema": "http://json-schema.org/draft-07/schema#", "title": "t", "description": "d"},
        {"type": "array", "items": [{"type": "integer"}], "additionalItems": False},
        {"$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/s"}}},
    ],
)
def test_usable_schemas(schema: Dict[str, Any]) -> None:
    assert sc.check_schema(schema) is None


def test_every_keyword_has_a_check() -> None:
    """The checker dispatches through `KEYWORDS` in schema_keywords' order; only "format"
    (not checked, like Claude Code) has no entry."""
    ordered = [*GENERIC, *(k for _, keywords in GROUPS for k in keywords)]
    assert list(sc.KEYWORDS) == [k for k in ordered if k != "format"]


def test_equal_is_javascripts() -> None:
    assert sc.equal(1, 1.0) and sc.equal({"a": [1, 2]}, {"a": [1.0, 2]})
    assert not sc.equal(True, 1) and not sc.equal(0, False) and not sc.equal([1], [1, 2])
    assert not sc.equal({"a": 1}, {"b": 1}) and not sc.equal(None, 0)


def test_js_json_prints_numbers_like_javascript() -> None:
    assert sc.js_json({"k": [1.0, 0.5, 1e-7, 1e21, "é"], "n": None}) == (
        '{"k":[1,0.5,1e-7,1e+21,"é"],"n":null}'
    )
