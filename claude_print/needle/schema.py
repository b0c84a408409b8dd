"""serde_yaml 0.9 as NEEDLE reads its files: the schemas of its config, workspace and
adapter files, and why serde would refuse a parsed node (`adapter_problems`).

Parsed nodes come from `yaml_reader`; what serde does with them is in view.py's
docstring.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from claude_print.needle.yaml_reader import (
    NULLS,
    U64_MAX,
    Scalar,
    YamlError,
    parse_float,
    parse_unsigned,
    resolve,
)

# --- serde's view of the nodes ---------------------------------------------------------------
#
# A schema names what serde_yaml 0.9 deserializes a field into: "str" (String, PathBuf),
# "opt_str", "u64", "opt_u64", "f64", "str_map" (HashMap<String, String>), "str_list"
# (Vec<String>), ("struct", fields, required), ("opt_struct", fields, required),
# ("map_of", schema) and ("enum", variants) for a `#[serde(tag = "method")]` enum, whose
# fields are read from serde's buffered content: "c_str" and "c_usize" there.

INPUT_METHOD = (
    "enum",
    {"stdin": {}, "file": {"path_template": "c_str"}, "args": {"flag": "c_str"}},
)
TOKEN_EXTRACTION = (
    "enum",
    {
        "json_field": {"input_path": "c_str", "output_path": "c_str"},
        "regex": {"pattern": "c_str", "input_group": "c_usize", "output_group": "c_usize"},
        "none": {},
    },
)
# NEEDLE's AgentAdapter (src/dispatch/mod.rs); serde ignores any other key.
ADAPTER_SCHEMA: Dict[str, Any] = {
    "name": "str",
    "description": "opt_str",
    "agent_cli": "str",
    "version_command": "opt_str",
    "input_method": INPUT_METHOD,
    "invoke_template": "str",
    "environment": "str_map",
    "timeout_secs": "u64",
    "provider": "opt_str",
    "model": "opt_str",
    "token_extraction": TOKEN_EXTRACTION,
    "output_transform": "opt_str",
}
ADAPTER_REQUIRED = ("name", "agent_cli", "invoke_template")
# The parts of Config (src/config/mod.rs, src/cost/mod.rs) that decide what runs.
CONFIG_SCHEMA = (
    "struct",
    {
        "agent": (
            "struct",
            {"default": "str", "args": "str_list", "timeout": "u64", "adapters_dir": "str"},
            (),
        ),
        "workspace": ("struct", {"default": "str", "home": "str", "labels": "str_list"}, ()),
        "pricing": (
            "map_of",
            (
                "struct",
                {"input_per_million": "f64", "output_per_million": "f64"},
                ("input_per_million", "output_per_million"),
            ),
        ),
    },
    (),
)
# WorkspaceOverrides (src/config/mod.rs), without `prompt`, `gates` and `strands`.
WORKSPACE_SCHEMA = (
    "struct",
    {
        "agent": ("opt_struct", {"default": "opt_str", "timeout": "opt_u64"}, ()),
        "workspace": ("opt_struct", {"labels": "str_list"}, ()),
        "verification": "opt_str_list",
    },
    (),
)


def is_empty(node: Any) -> bool:
    """An empty plain scalar, which serde_yaml reads as an empty map or list."""
    return isinstance(node, Scalar) and node.plain and node.text == ""


def _is_null(node: Any) -> bool:
    return isinstance(node, Scalar) and node.plain and (node.text == "" or node.text in NULLS)


def text_of(node: Any) -> Optional[str]:
    """The text serde gives a String field, or None when `node` is no scalar."""
    return node.text if isinstance(node, Scalar) else None


def opt_text_of(node: Any) -> Optional[str]:
    """The text of an Option<String>: None for null."""
    return None if _is_null(node) else text_of(node)


def node_problems(schema: Any, node: Any, path: str) -> List[str]:
    """Why serde_yaml would refuse `node` as `schema` (empty: it would not)."""
    if isinstance(schema, tuple):
        kind = schema[0]
        if kind == "enum":
            return _tagged_problems(node, path, schema[1])
        if kind == "map_of":
            if is_empty(node):
                return []
            if not isinstance(node, dict):
                return [f"{path} must be a mapping"]
            return [p for k, v in node.items() for p in node_problems(schema[1], v, f"{path}.{k}")]
        if kind == "opt_struct" and _is_null(node):
            return []
        fields, required = schema[1], schema[2]
        if is_empty(node):
            node = {}
        if not isinstance(node, dict):
            return [f"{path or 'the top level'} must be a mapping"]
        where = f"{path}." if path else ""
        problems = [f"missing {where}{key}" for key in required if key not in node]
        for key, sub in fields.items():
            if key in node:
                problems += node_problems(sub, node[key], f"{where}{key}")
        if problems and "<<" in node and any(p.startswith("missing") for p in problems):
            problems.append(f"serde_yaml 0.9 merges no `{where}<<` (it is a plain key)")
        return problems
    if schema in ("str", "opt_str"):
        return [] if isinstance(node, Scalar) else [f"{path} must be a string"]
    if schema in ("u64", "opt_u64"):
        if schema == "opt_u64" and _is_null(node):
            return []
        value = parse_unsigned(node.text) if isinstance(node, Scalar) and node.plain else None
        if value is None or value > U64_MAX:
            return [f"{path} must be a whole number (unquoted)"]
        return []
    if schema == "f64":
        ok = isinstance(node, Scalar) and node.plain and parse_float(node.text) is not None
        return [] if ok else [f"{path} must be a number (unquoted)"]
    if schema == "str_map":
        if is_empty(node) or (
            isinstance(node, dict) and all(isinstance(v, Scalar) for v in node.values())
        ):
            return []
        return [f"{path} must map names to strings"]
    if schema == "opt_str_list" and _is_null(node):
        return []
    if is_empty(node) or (isinstance(node, list) and all(isinstance(v, Scalar) for v in node)):
        return []
    return [f"{path} must be a list of strings"]


def _tagged_problems(node: Any, path: str, variants: Dict[str, Dict[str, str]]) -> List[str]:
    """An internally tagged enum (`method:` names the variant)."""
    if isinstance(node, list):
        raise YamlError(f"{path}: its list form is not checked here")
    if not isinstance(node, dict):
        return [f"{path} must be a mapping with `method:`"]
    names = ", ".join(sorted(variants))
    tag = node.get("method")
    if tag is None:
        return [f"{path}.method is missing (one of {names})"]
    if not isinstance(tag, Scalar) or tag.text not in variants:
        return [f"{path}.method must be one of {names}"]
    problems = []
    for field, kind in variants[tag.text].items():
        if field not in node:
            problems.append(f"{path} ({tag.text}) needs {field}")
            continue
        value = resolve(node[field]) if isinstance(node[field], Scalar) else None
        if kind == "c_str" and not isinstance(value, str):
            problems.append(f"{path}.{field} must be a string (quote it)")
        elif kind == "c_usize" and not (type(value) is int and 0 <= value <= U64_MAX):
            problems.append(f"{path}.{field} must be a whole number (unquoted)")
    return problems


def adapter_problems(node: Any) -> List[str]:
    """Why serde_yaml would refuse `node` (from parse_yaml) as NEEDLE's AgentAdapter.

    Raises YamlError for what this module does not check."""
    return node_problems(("struct", ADAPTER_SCHEMA, ADAPTER_REQUIRED), node, "")
